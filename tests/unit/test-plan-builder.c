/* The plan builder (recording -> planned image) and the plan store (images of
 * several processes merged into one file): occurrences follow allocation order per
 * site, the packing is valid by the independent checker, and merging keeps one
 * image per executable and arguments. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "checker.h"
#include "plan_builder.h"
#include "plan_store.h"

#define ALLOCS 20000
#define SITES  7

static const char strings[] = "/bin/prog\0";
static struct plan_module module = {.key = 1, .path_offset = 0, .path_bytes = 9};
static struct plan_frame frame = {0, 0, 0x10};

static struct plan_image base_image(struct plan_site *sites, uint64_t exe_key, uint32_t pid)
{
	struct plan_image im = {0};

	for (uint32_t s = 0; s < SITES; s++)
		sites[s] = (struct plan_site){.key = 1000 + s, .first_frame = 0, .frame_count = 1};
	im.record = (struct plan_image_record){
	    .exe_key = exe_key,
	    .args_key = 5,
	    .pid = pid,
	    .depth = 1,
	    .module_count = 1,
	    .site_count = SITES,
	    .frame_count = 1,
	    .strings_bytes = sizeof(strings),
	    .exe_path_offset = 0,
	    .exe_path_bytes = 9,
	};
	im.strings = strings;
	im.modules = &module;
	im.frames = &frame;
	im.sites = sites;
	return im;
}

/* A random malloc/free/realloc trace with sizes from 1 byte to 1 MiB. Some blocks
 * are realloc'ed: the old one ends one tick after the new one starts, as the
 * recorder does it. */
static struct recorded_alloc *make_trace(uint64_t n)
{
	struct recorded_alloc *a = calloc(n, sizeof(*a));
	uint64_t t = 0;

	srand(7);
	for (uint64_t i = 0; i < n; i++) {
		a[i].site = (uint32_t)(rand() % SITES);
		a[i].size_bytes = 1 + (uint64_t)(rand() % (rand() % 4 ? 256 : 1 << 20));
		a[i].align_bytes = rand() % 10 ? 1 : 256;
		a[i].t_start = t++;
	}
	for (uint64_t i = 0; i < n; i++) {
		a[i].realloc_of = RECORDED_NOT_REALLOC;
		a[i].t_end =
		    rand() % 50 ? a[i].t_start + 1 + (uint64_t)(rand() % 300) : PLAN_T_INFINITY;
	}
	for (uint64_t i = 1; i < n; i++) {
		if (rand() % 5 == 0) {
			/* i reallocs i - 1: shrinking (stays in place) or growing (moves). */
			a[i].realloc_of = i - 1;
			a[i - 1].t_end = a[i].t_start + 1;
			a[i].align_bytes = 1;
		}
	}
	return a;
}

static void check_built(const struct plan_image *im, const struct recorded_alloc *a, uint64_t n)
{
	struct block *blocks = calloc(n, sizeof(*blocks));
	uint64_t seen[SITES] = {0};
	char why[256];

	CHECK_EQ_U64(im->record.entry_count, n);
	/* Occurrence k of a site is its k-th allocation in time. */
	for (uint64_t i = 0; i < n; i++) {
		const struct plan_site *s = &im->sites[a[i].site];
		const struct plan_entry *e = &im->entries[s->first_entry + seen[a[i].site]];
		CHECK_EQ_U64(e->occurrence, seen[a[i].site]);
		CHECK_EQ_U64(e->t_start, a[i].t_start);
		CHECK_EQ_U64(e->size_bytes, a[i].size_bytes);
		seen[a[i].site]++;
	}
	uint64_t in_place = 0;
	for (uint64_t i = 0; i < n; i++) {
		const struct plan_entry *e = &im->entries[i];
		CHECK(e->offset_bytes % PLAN_GRANULE_BYTES == 0);
		if (e->in_place_of) {
			/* Shares its block, which lives at least as long and is as big. */
			const struct plan_entry *root = &im->entries[e->in_place_of - 1];
			CHECK(!root->in_place_of);
			CHECK_EQ_U64(e->offset_bytes, root->offset_bytes);
			CHECK(root->t_end >= e->t_end && root->t_start < e->t_start);
			CHECK((root->size_bytes + 15) / 16 >=
			      (e->size_bytes + 15) / 16); /* fits the block */
			in_place++;
			/* It takes no space of its own: size 0 for the checker. */
			blocks[i] = (struct block){0, e->t_start, e->t_end, e->offset_bytes, 1};
			continue;
		}
		blocks[i] = (struct block){e->size_bytes, e->t_start, e->t_end, e->offset_bytes,
					   e->align_bytes};
	}
	CHECK(in_place > n / 20); /* the trace has shrinking reallocs */
	if (checker_validate(blocks, n, im->record.arena_bytes, why, sizeof(why)) != 0) {
		fprintf(stderr, "invalid plan: %s\n", why);
		exit(1);
	}
	CHECK(im->record.arena_bytes >= im->record.lower_bound_bytes);
	CHECK(im->record.lower_bound_bytes > 0);
	free(blocks);
}

int main(void)
{
	struct plan_site input_sites[SITES], *sites, *sites2;
	struct plan_entry *entries, *entries2, *replanned;
	struct recorded_alloc *trace = make_trace(ALLOCS);
	struct plan_image im = base_image(input_sites, 7, 100);
	char dir[] = "/tmp/memplan-test-XXXXXX", path[256];
	void *buf;
	size_t len;

	CHECK(plan_builder_build(&im, trace, ALLOCS, NULL, &sites, &entries) == 0);
	check_built(&im, trace, ALLOCS);
	void *ser;
	size_t ser_len;
	CHECK(plan_file_serialize(&im, 1, 1, &ser, &ser_len) == 0);
	free(ser);

	/* Re-planning keeps the entries valid. */
	CHECK(plan_builder_replan(&im, NULL, &replanned) == 0);
	check_built(&im, trace, ALLOCS);

	/* A bad recording is refused, not planned. */
	struct plan_image bad = base_image(input_sites, 7, 100);
	struct recorded_alloc wrong = {.site = SITES,
				       .align_bytes = 1,
				       .size_bytes = 1,
				       .t_start = 0,
				       .t_end = 1,
				       .realloc_of = RECORDED_NOT_REALLOC};
	CHECK(plan_builder_build(&bad, &wrong, 1, NULL, &sites2, &entries2) == -EINVAL);
	wrong.site = 0;
	wrong.align_bytes = 3;
	CHECK(plan_builder_build(&bad, &wrong, 1, NULL, &sites2, &entries2) == -EINVAL);

	/* The store: a second executable is added; the same one from another process
	 * with fewer entries is not; a new recording replaces the file. */
	CHECK(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/app.plan", dir);
	CHECK(plan_store_merge(path, 11, &im) == 0);
	struct plan_image other = base_image(input_sites, 8, 101);
	CHECK(plan_builder_build(&other, trace, 100, NULL, &sites2, &entries2) == 0);
	CHECK(plan_store_merge(path, 11, &other) == 0);
	struct plan_image smaller = other;
	smaller.record.exe_key = 7;
	smaller.record.pid = 102;
	CHECK(plan_store_merge(path, 11, &smaller) == 0);
	CHECK(plan_file_load(path, &buf, &len, NULL, 0) == 0);
	CHECK_EQ_U64(plan_file_header(buf)->image_count, 2);
	struct plan_image first;
	plan_file_image(buf, 0, &first);
	CHECK_EQ_U64(first.record.entry_count, ALLOCS);
	free(buf);
	CHECK(plan_store_merge(path, 12, &other) == 0);
	CHECK(plan_file_load(path, &buf, &len, NULL, 0) == 0);
	CHECK_EQ_U64(plan_file_header(buf)->image_count, 1);
	CHECK_EQ_U64(plan_file_header(buf)->record_id, 12);
	free(buf);
	unlink(path);
	CHECK(rmdir(dir) == 0); /* no temp or lock file left behind */

	free(sites);
	free(entries);
	free(replanned);
	free(sites2);
	free(entries2);
	free(trace);
	return 0;
}
