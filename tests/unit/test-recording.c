/* The recording planned as it goes (recording -> planned image), folded past its
 * window, re-planning, and the plan store (images of several processes merged
 * into one file). A random malloc/free/realloc program, every site inside its
 * window, runs against a model of what each entry must say: occurrences follow
 * allocation order per site, lifetimes follow the clock, in-place reallocs share
 * their block, the requested peak and each site's bytes at it are exact, and the
 * packing (entries and pools) is valid by the independent checker. Loops past
 * the window fold into pools of the blocks they hold at once, whatever their
 * length. Merging keeps one image per executable and arguments. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "checker.h"
#include "plan_builder.h"
#include "plan_store.h"
#include "recording.h"

/* Each of the SITES sites stays inside its window (RECORDING_WINDOW). */
#define OPS   20000
#define SITES 7
#define HELD  400

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

/* What the model expects of each entry, in allocation order. */
struct expected {
	uint32_t site;
	uint64_t occurrence, size, align, t_start, t_end;
	int64_t root; /* index of the entry whose block it continues, or -1 */
};

struct model {
	struct expected *e;
	uint64_t count, clock, per_site[SITES];
	uint64_t held_address[HELD]; /* 0: empty */
	uint64_t held_entry[HELD], held_root[HELD], held_requested[HELD];
	uint64_t next_address;
	/* Requested bytes live, per site (a block's are its first allocation's
	 * site's, reallocated in place or not), and at the first peak. */
	uint64_t live[SITES], at_peak[SITES], live_total, peak;
};

/* Block k's requested bytes become bytes, for site (the block's). */
static void model_requested(struct model *m, uint32_t site, int k, uint64_t bytes)
{
	m->live[site] += bytes - m->held_requested[k];
	m->live_total += bytes - m->held_requested[k];
	m->held_requested[k] = bytes;
	if (m->live_total > m->peak) {
		m->peak = m->live_total;
		memcpy(m->at_peak, m->live, sizeof(m->live));
	}
}

static uint64_t expect_entry(struct model *m, uint32_t site, uint64_t size, uint64_t align,
			     int64_t root)
{
	m->e[m->count] = (struct expected){
	    .site = site,
	    .occurrence = m->per_site[site]++,
	    .size = size,
	    .align = align,
	    .t_start = m->clock++,
	    .t_end = PLAN_T_INFINITY,
	    .root = root,
	};
	return m->count++;
}

/* Runs a random program against rec and the model; returns the entries expected. */
static struct model run_program(struct recording *rec, uint64_t ops, uint32_t lanes)
{
	struct model m = {.e = calloc(2 * ops, sizeof(struct expected)), .next_address = 4096};

	for (uint32_t s = 0; s < SITES; s++)
		CHECK(recording_add_site(rec) == 0 && recording_site_lane(rec, s, s % lanes) == 0);
	uint64_t seed = 7;
	for (uint64_t op = 0; op < ops; op++) {
		int k = (int)(check_random(&seed) % HELD);
		uint32_t site = (uint32_t)(check_random(&seed) % SITES);
		uint64_t size = 1 + check_random(&seed) % (check_random(&seed) % 4 ? 256 : 1 << 20);
		uint64_t address = m.held_address[k];

		if (!address) {
			uint64_t align = check_random(&seed) % 10
					     ? 1
					     : UINT64_C(1) << (1 + check_random(&seed) % 12);
			m.held_address[k] = m.next_address;
			m.next_address += 64;
			CHECK(recording_alloc(rec, m.held_address[k], site, size, align) == 0);
			m.held_entry[k] = m.held_root[k] = expect_entry(&m, site, size, align, -1);
			model_requested(&m, site, k, size);
			continue;
		}
		switch (check_random(&seed) % 4) {
		case 0: { /* realloc: in place if it fits the block's granules, else moved */
			uint64_t token = recording_realloc_begin(rec, address);
			uint64_t root = m.held_root[k],
				 fits = (size + 15) / 16 <= (m.e[root].size + 15) / 16;
			uint64_t to = address;
			if (check_random(&seed) % 2) {
				to = m.next_address;
				m.next_address += 64;
			}
			CHECK(token != RECORDING_NO_TOKEN);
			recording_realloc_done(rec, token, address, to, size, site);
			uint64_t now = expect_entry(&m, site, size, 1, fits ? (int64_t)root : -1);
			if (fits) {
				model_requested(&m, m.e[root].site, k, size);
			} else { /* the new block starts, then the old one ends */
				uint64_t old_bytes = m.held_requested[k];
				m.held_requested[k] = 0;
				model_requested(&m, site, k, size);
				m.live[m.e[root].site] -= old_bytes;
				m.live_total -= old_bytes;
			}
			/* The block's own entry lives as long as the block. */
			if (!fits || m.held_entry[k] != root)
				m.e[m.held_entry[k]].t_end = m.clock;
			if (!fits)
				m.e[root].t_end = m.clock;
			m.clock++;
			m.held_address[k] = to;
			m.held_entry[k] = now;
			if (!fits)
				m.held_root[k] = now;
			break;
		}
		case 1: { /* a realloc that libc fails leaves the block as it was */
			uint64_t token = recording_realloc_begin(rec, address);
			recording_realloc_done(rec, token, address, 0, size, site);
			break;
		}
		default: /* free */
			recording_free(rec, address);
			model_requested(&m, m.e[m.held_root[k]].site, k, 0);
			m.e[m.held_entry[k]].t_end = m.e[m.held_root[k]].t_end = m.clock++;
			m.held_address[k] = 0;
			break;
		}
	}
	recording_free(rec, 12345); /* never allocated: ignored */
	return m;
}

/* The chunks of an image's pools as blocks for the checker, after n others in
 * blocks. */
static uint64_t add_pools(const struct plan_image *im, struct block *blocks, uint64_t n)
{
	for (uint32_t k = 0; k < im->record.chunk_count; k++) {
		const struct plan_chunk *c = &im->chunks[k];
		const struct plan_pool *p = &im->pools[c->pool];
		CHECK(c->slot_count > 0 && p->slot_bytes % PLAN_GRANULE_BYTES == 0);
		blocks[n++] = (struct block){p->slot_bytes * c->slot_count, c->t_start,
					     PLAN_T_INFINITY, c->offset_bytes, p->align_bytes};
	}
	return n;
}

static void check_built(const struct plan_image *im, const struct model *m)
{
	uint64_t n = m->count, in_place = 0, first_of_site[SITES];
	struct block *blocks = calloc(n + im->record.chunk_count, sizeof(*blocks));
	struct plan_entry *decoded = NULL;
	const struct plan_entry *entries = im->entries;
	char why[256];
	void *file;
	size_t len;

	/* As written, the image passes the reader's full check. */
	CHECK(plan_file_serialize(im, 1, 1, &file, &len) == 0);
	if (plan_file_validate(file, len, why, sizeof(why)) != 0) {
		fprintf(stderr, "invalid file: %s\n", why);
		exit(1);
	}
	free(file);
	if (!entries) { /* encoded, as a big recording's are */
		CHECK(plan_image_entries(im, &decoded) == 0);
		entries = decoded;
	}
	CHECK_EQ_U64(im->record.entry_count, n);
	CHECK_EQ_U64(im->record.folded_count, 0);
	CHECK_EQ_U64(im->record.requested_peak_bytes, m->peak);
	for (uint32_t s = 0; s < SITES; s++) {
		first_of_site[s] = im->sites[s].first_entry;
		CHECK_EQ_U64(im->sites[s].alloc_count, m->per_site[s]);
		CHECK_EQ_U64(im->sites[s].entry_count, m->per_site[s]);
		CHECK_EQ_U64(im->sites[s].peak_bytes, m->at_peak[s]);
	}
	for (uint64_t i = 0; i < n; i++) {
		const struct expected *x = &m->e[i];
		uint64_t at = first_of_site[x->site] + x->occurrence;
		const struct plan_entry *e = &entries[at];
		CHECK_EQ_U64(e->site, x->site);
		CHECK_EQ_U64(e->occurrence, x->occurrence);
		CHECK_EQ_U64(e->size_bytes, x->size);
		CHECK_EQ_U64(e->t_start, x->t_start);
		CHECK_EQ_U64(e->t_end, x->t_end);
		CHECK_EQ_U64(e->align_bytes, x->align);
		CHECK_EQ_U64(e->flags, 0);
		CHECK(e->offset_bytes % PLAN_GRANULE_BYTES == 0);
		CHECK(e->offset_bytes % e->align_bytes == 0);
		if (x->root >= 0) {
			/* Shares its block, which lives at least as long and is as big. */
			const struct expected *xr = &m->e[x->root];
			CHECK_EQ_U64(e->in_place_of, first_of_site[xr->site] + xr->occurrence + 1);
			const struct plan_entry *root = &entries[e->in_place_of - 1];
			CHECK(!root->in_place_of);
			CHECK_EQ_U64(e->offset_bytes, root->offset_bytes);
			CHECK(root->t_end >= e->t_end && root->t_start < e->t_start);
			in_place++;
			/* It takes no space of its own: size 0 for the checker. */
			blocks[i] = (struct block){0, e->t_start, e->t_end, e->offset_bytes, 1};
			continue;
		}
		CHECK(!e->in_place_of);
		blocks[i] = (struct block){(e->size_bytes + 15) / 16 * 16, e->t_start, e->t_end,
					   e->offset_bytes, e->align_bytes};
	}
	/* A long program has shrinking reallocs; a short one mostly allocates. */
	CHECK(in_place > n / 20 || n < 1000);
	/* Its sites reuse their memory: each gets a tail for a longer run, the
	 * places of its last entries. */
	for (uint32_t s = 0; s < SITES; s++)
		CHECK(n < 1000 || (im->sites[s].tail_entries > 0 &&
				   im->sites[s].tail_entries <= im->sites[s].entry_count));
	CHECK_EQ_U64(im->record.pool_count, 0);
	uint64_t total = add_pools(im, blocks, n);
	if (checker_validate(blocks, total, im->record.arena_bytes, why, sizeof(why)) != 0) {
		fprintf(stderr, "invalid plan: %s\n", why);
		exit(1);
	}
	CHECK(im->record.arena_bytes >= im->record.lower_bound_bytes);
	CHECK(im->record.lower_bound_bytes > 0);
	free(blocks);
	free(decoded);
}

/* Lane l's blocks: the lowest offset and the highest end. */
static void lane_span(const struct plan_image *im, const struct plan_entry *e, uint32_t lane,
		      uint64_t *lo, uint64_t *hi)
{
	*lo = UINT64_MAX;
	*hi = 0;
	for (uint64_t i = 0; i < im->record.entry_count; i++) {
		if (e[i].site % 2 != lane)
			continue;
		if (e[i].offset_bytes < *lo)
			*lo = e[i].offset_bytes;
		if (e[i].offset_bytes + e[i].size_bytes > *hi)
			*hi = e[i].offset_bytes + e[i].size_bytes;
	}
}

/* The bytes of an image's pools. */
static uint64_t pool_bytes(const struct plan_image *im)
{
	uint64_t bytes = 0;

	for (uint32_t k = 0; k < im->record.pool_count; k++)
		bytes += im->pools[k].slot_bytes * im->pools[k].slot_count;
	return bytes;
}

/* The entries of an image pass the independent checker. */
static void check_valid(const struct plan_image *im, const struct plan_entry *e)
{
	uint64_t n = im->record.entry_count;
	struct block *blocks = calloc(n + im->record.chunk_count + 1, sizeof(*blocks));
	char why[256];

	for (uint64_t i = 0; i < n; i++)
		blocks[i] =
		    (struct block){e[i].in_place_of ? 0 : (e[i].size_bytes + 15) / 16 * 16,
				   e[i].t_start, e[i].t_end, e[i].offset_bytes, e[i].align_bytes};
	n = add_pools(im, blocks, n);
	if (checker_validate(blocks, n, im->record.arena_bytes, why, sizeof(why)) != 0) {
		fprintf(stderr, "invalid plan: %s\n", why);
		exit(1);
	}
	free(blocks);
}

/* Two threads' blocks alive side by side get regions of their own, and keep them
 * when re-planned; threads that follow each other are packed together, since
 * regions would waste the arena. */
static void check_lanes(void)
{
	struct plan_site input_sites[SITES];
	struct recording_built built;
	struct plan_entry *entries, *replanned;
	struct plan_image im = base_image(input_sites, 9, 103);
	struct recording rec;
	uint64_t ring[2][8] = {{0}}, address = 4096, lo[2], hi[2];

	CHECK(recording_init(&rec) == 0);
	for (uint32_t s = 0; s < SITES; s++)
		CHECK(recording_add_site(&rec) == 0 && recording_site_lane(&rec, s, s % 2) == 0);
	for (uint32_t op = 0; op < 4000; op++) {
		uint32_t lane = op % 2, k = (op / 2) % 8;
		if (ring[lane][k])
			recording_free(&rec, ring[lane][k]);
		ring[lane][k] = address += 4096;
		CHECK(recording_alloc(&rec, address, lane, 256 - op % 16, 1) == 0);
	}
	CHECK(recording_build(&rec, &im, NULL, &built) == 0);
	/* The rings' blocks are alive at the end, so their pools (for a longer run)
	 * cannot share their bytes: they come on top. */
	CHECK(im.record.arena_bytes <= (im.record.lower_bound_bytes + pool_bytes(&im)) * 5 / 4);
	CHECK(plan_image_entries(&im, &entries) == 0);
	lane_span(&im, entries, 0, &lo[0], &hi[0]);
	lane_span(&im, entries, 1, &lo[1], &hi[1]);
	CHECK(hi[0] <= lo[1] || hi[1] <= lo[0]);
	CHECK(im.record.flags & PLAN_IMAGE_THREAD_REGIONS);
	struct plan_image re = im;
	re.entries = entries;
	struct plan_chunk *replanned_chunks;
	CHECK(plan_builder_replan(&re, NULL, &replanned, &replanned_chunks) == 0);
	CHECK(re.record.flags & PLAN_IMAGE_THREAD_REGIONS);
	CHECK_EQ_U64(re.record.lower_bound_bytes, im.record.lower_bound_bytes);
	check_valid(&re, replanned);
	lane_span(&re, replanned, 0, &lo[0], &hi[0]);
	lane_span(&re, replanned, 1, &lo[1], &hi[1]);
	CHECK(hi[0] <= lo[1] || hi[1] <= lo[0]);
	CHECK(hi[0] <= re.record.arena_bytes && hi[1] <= re.record.arena_bytes);
	free(replanned);
	free(replanned_chunks);
	/* The planner proper packs the regions side by side on its threads, and
	 * lays them out as one thread does: the same offsets. */
	struct plan_entry *side[2];
	struct plan_chunk *side_chunks[2];
	uint64_t side_arena[2];
	for (unsigned t = 0; t < 2; t++) {
		struct planner_options popt = {.threads = t + 1};
		re = im;
		re.entries = entries;
		re.record.arena_bytes = 100 * im.record.arena_bytes; /* not skipped */
		CHECK(plan_builder_replan(&re, &popt, &side[t], &side_chunks[t]) == 0);
		check_valid(&re, side[t]);
		side_arena[t] = re.record.arena_bytes;
	}
	CHECK_EQ_U64(side_arena[0], side_arena[1]);
	for (uint64_t i = 0; i < im.record.entry_count; i++)
		CHECK_EQ_U64(side[0][i].offset_bytes, side[1][i].offset_bytes);
	for (unsigned t = 0; t < 2; t++) {
		free(side[t]);
		free(side_chunks[t]);
	}
	free(entries);
	recording_built_free(&built);
	recording_fini(&rec);

	/* Six threads one after another, each holding a mebibyte for a while. */
	im = base_image(input_sites, 9, 104);
	CHECK(recording_init(&rec) == 0);
	for (uint32_t s = 0; s < SITES; s++)
		CHECK(recording_add_site(&rec) == 0 && recording_site_lane(&rec, s, s) == 0);
	for (uint32_t s = 0; s < 6; s++) {
		CHECK(recording_alloc(&rec, address += 4096, s, 1 << 20, 1) == 0);
		recording_free(&rec, address);
	}
	CHECK(recording_build(&rec, &im, NULL, &built) == 0);
	CHECK_EQ_U64(im.record.lower_bound_bytes, 1 << 20);
	CHECK(im.record.arena_bytes <= im.record.lower_bound_bytes * 5 / 4);
	CHECK(!(im.record.flags & PLAN_IMAGE_THREAD_REGIONS));
	recording_built_free(&built);
	recording_fini(&rec);

	/* The same six, noted as threads: alive all at once (made together, ended
	 * together), they keep their regions however they ran; each alive only
	 * around its own work, they still pack together. */
	for (int together = 1; together >= 0; together--) {
		im = base_image(input_sites, 9, 104);
		CHECK(recording_init(&rec) == 0);
		for (uint32_t s = 0; s < SITES; s++)
			CHECK(recording_add_site(&rec) == 0 &&
			      recording_site_lane(&rec, s, s) == 0);
		for (uint32_t s = 0; together && s < 6; s++)
			recording_thread_begins(&rec, s, 0);
		for (uint32_t s = 0; s < 6; s++) {
			if (!together)
				recording_thread_begins(&rec, s, recording_now(&rec));
			CHECK(recording_alloc(&rec, address += 4096, s, 1 << 20, 1) == 0);
			recording_free(&rec, address);
			if (!together)
				recording_thread_ends(&rec, s);
		}
		for (uint32_t s = 0; together && s < 6; s++)
			recording_thread_ends(&rec, s);
		CHECK(recording_build(&rec, &im, NULL, &built) == 0);
		CHECK_EQ_U64(im.record.lower_bound_bytes, 1 << 20);
		if (together) {
			CHECK(im.record.flags & PLAN_IMAGE_THREAD_REGIONS);
			CHECK_EQ_U64(im.record.arena_bytes, 6 << 20);
		} else {
			CHECK(!(im.record.flags & PLAN_IMAGE_THREAD_REGIONS));
			CHECK(im.record.arena_bytes <= im.record.lower_bound_bytes * 5 / 4);
		}
		recording_built_free(&built);
		recording_fini(&rec);
	}
}

/* A realloc site whose reallocs all stay in place takes an occurrence each but
 * starts no block, until one moves: its log must then still have a slot at that
 * occurrence (the slot it once lacked was written past the log's end). Checked
 * through the built plan, and, under AddressSanitizer, by the writes
 * themselves. Past the window, the site folds, and the moved block is in a
 * pool. */
static void check_in_place_runs(uint64_t runs)
{
	struct plan_site input_sites[SITES];
	struct plan_image im = base_image(input_sites, 4, 106);
	struct recording_built built;
	struct recording rec;
	const uint64_t at = 4096, moved = 1 << 20;
	const bool folds = runs >= RECORDING_WINDOW;

	CHECK(recording_init(&rec) == 0);
	for (uint32_t s = 0; s < SITES; s++)
		CHECK(recording_add_site(&rec) == 0 && recording_site_lane(&rec, s, 0) == 0);
	CHECK(recording_alloc(&rec, at, 0, 100, 1) == 0);
	for (uint64_t i = 0; i < runs; i++) {
		uint64_t token = recording_realloc_begin(&rec, at);
		CHECK(token != RECORDING_NO_TOKEN);
		recording_realloc_done(&rec, token, at, at, 96 + (i & 1), 1);
	}
	uint64_t token = recording_realloc_begin(&rec, at);
	recording_realloc_done(&rec, token, at, moved, 100000, 1); /* moves */
	recording_free(&rec, moved);
	CHECK_EQ_U64(rec.sites[1].count, runs + 1);
	CHECK(folds || rec.sites[1].ended_capacity > runs);
	CHECK(recording_build(&rec, &im, NULL, &built) == 0);
	CHECK_EQ_U64(im.sites[1].alloc_count, runs + 1);
	CHECK_EQ_U64(im.sites[1].entry_count, folds ? RECORDING_WINDOW : runs + 1);
	CHECK_EQ_U64(im.record.folded_count, folds ? runs + 1 - RECORDING_WINDOW : 0);
	CHECK_EQ_U64(im.record.entry_count, im.sites[1].entry_count + 1);
	struct plan_entry *e;
	CHECK(plan_image_entries(&im, &e) == 0);
	const struct plan_entry *last = &e[im.sites[1].first_entry + im.sites[1].entry_count - 1];
	if (folds) { /* the moved block is folded: the site has a pool for it */
		CHECK(im.sites[1].pool_count >= 1);
		CHECK(im.pools[im.sites[1].first_pool].slot_bytes >= 100000);
		CHECK(last->in_place_of == im.sites[0].first_entry + 1);
	} else { /* its last occurrence is the moved block: its own bytes, ended */
		CHECK_EQ_U64(last->size_bytes, 100000);
		CHECK(last->in_place_of == 0 && last->t_end != PLAN_T_INFINITY);
	}
	CHECK(e[im.sites[1].first_entry].in_place_of == im.sites[0].first_entry + 1);
	free(e);
	recording_built_free(&built);
	recording_fini(&rec);
}

/* Checks that im's entries and pools never share bytes while both are alive
 * (the independent checker) and that its plan file is valid; returns the
 * file's size in bytes. */
static size_t check_sound(const struct plan_image *im)
{
	struct plan_entry *e;
	char why[256];
	void *file;
	size_t len;

	CHECK(plan_image_entries(im, &e) == 0);
	struct block *blocks =
	    calloc(im->record.entry_count + im->record.chunk_count, sizeof(*blocks));
	CHECK(blocks != NULL);
	for (uint64_t i = 0; i < im->record.entry_count; i++)
		blocks[i] = (struct block){(e[i].size_bytes + 15) / 16 * 16, e[i].t_start,
					   e[i].t_end, e[i].offset_bytes, e[i].align_bytes};
	uint64_t n = add_pools(im, blocks, im->record.entry_count);
	if (checker_validate(blocks, n, im->record.arena_bytes, why, sizeof(why)) != 0) {
		fprintf(stderr, "invalid plan: %s\n", why);
		exit(1);
	}
	CHECK(plan_file_serialize(im, 1, 1, &file, &len) == 0);
	CHECK(plan_file_validate(file, len, why, sizeof(why)) == 0);
	free(file);
	free(blocks);
	free(e);
	return len;
}

/* A steady loop (site 0: a ring of RING blocks of varying sizes), a growing
 * table (site 1: never freed) and a few one-off blocks (site 2), recorded for
 * loops of 100000 and 1000000 blocks: the loop keeps its window's entries and
 * folds the rest into pools, the table (no steady state) is recorded exactly;
 * the plan is the same size for both, the pools hold what the loop had alive at
 * once, and with the entries they pass the independent checker. Returns the
 * plan's size in bytes. */
#define RING 10
static size_t check_folding(uint64_t loops)
{
	struct plan_site input_sites[SITES];
	struct plan_image im = base_image(input_sites, 3, 107);
	struct recording_built built;
	struct recording rec;
	uint64_t ring[RING] = {0}, address = 1 << 20, table = 0, seed = 11;
	uint64_t live = 0, peak = 0, sizes[RING] = {0};

	CHECK(recording_init(&rec) == 0);
	for (uint32_t s = 0; s < SITES; s++)
		CHECK(recording_add_site(&rec) == 0 && recording_site_lane(&rec, s, 0) == 0);
	CHECK(recording_alloc(&rec, address += 4096, 2, 5000, 64) == 0);
	for (uint64_t i = 0; i < loops; i++) {
		uint32_t k = (uint32_t)(i % RING);
		if (ring[k]) {
			recording_free(&rec, ring[k]);
			live -= sizes[k];
		}
		sizes[k] = 24 + check_random(&seed) % 177;
		ring[k] = address += 4096;
		CHECK(recording_alloc(&rec, ring[k], 0, sizes[k], 1) == 0);
		live += sizes[k];
		if (i % 16 == 0 && table < 6000) {
			CHECK(recording_alloc(&rec, address += 4096, 1, 48, 1) == 0);
			table++;
			live += 48;
		}
		if (live + 5000 > peak)
			peak = live + 5000;
	}
	CHECK(rec.sites[0].ended_capacity <= RECORDING_WINDOW);
	CHECK(recording_build(&rec, &im, NULL, &built) == 0);
	CHECK_EQ_U64(im.sites[0].alloc_count, loops);
	CHECK_EQ_U64(im.sites[0].entry_count, RECORDING_WINDOW);
	/* The table's blocks pile up: no steady state, so it is recorded exactly. */
	CHECK_EQ_U64(im.sites[1].alloc_count, table);
	CHECK_EQ_U64(im.sites[1].entry_count, table);
	CHECK_EQ_U64(im.sites[1].pool_count, 0);
	CHECK_EQ_U64(im.sites[1].tail_entries, 0);
	CHECK_EQ_U64(im.sites[2].entry_count, 1);
	CHECK_EQ_U64(im.sites[2].pool_count, 0); /* once is no steady state */
	CHECK_EQ_U64(im.record.folded_count, loops - RECORDING_WINDOW);
	CHECK_EQ_U64(im.record.requested_peak_bytes, peak);
	/* The ring: slots for its RING blocks at most, in a few pools of tight
	 * slots; the table: a slot for every block it had beyond the window. */
	uint32_t ring_slots = 0;
	for (uint32_t k = 0; k < im.sites[0].pool_count; k++) {
		const struct plan_pool *p = &im.pools[im.sites[0].first_pool + k];
		ring_slots += p->slot_count;
		CHECK(p->slot_bytes <= 288); /* 200 bytes and a quarter, in a class */
		CHECK(p->max_live <= p->slot_count);
	}

	CHECK(ring_slots >= RING && ring_slots <= 4 * RING);
	CHECK(im.record.arena_bytes >= im.record.lower_bound_bytes);
	size_t len = check_sound(&im);
	recording_built_free(&built);
	recording_fini(&rec);
	return len;
}

/* A table filled for the whole run (site 0: blocks of random sizes, one freed
 * at random for every four added, so it never settles) beside a steady ring
 * (site 1): the table is recorded exactly up to RECORDING_WINDOW_MAX
 * occurrences and folded past them, its pools holding every block it had alive
 * at once; with the entries they pass the independent checker, and the plan is
 * about the same size for twice as long a run. Returns the plan's size in
 * bytes. */
static size_t check_pile_up(uint64_t blocks_added)
{
	struct plan_site input_sites[SITES];
	struct plan_image im = base_image(input_sites, 3, 108);
	struct recording_built built;
	struct recording rec;
	uint64_t *table = calloc(blocks_added, sizeof(*table));
	uint64_t *occurrence = calloc(blocks_added, sizeof(*occurrence));
	uint64_t address = 1 << 20, seed = 5, held = 0, ring[8] = {0};

	CHECK(table && occurrence);
	CHECK(recording_init(&rec) == 0);
	for (uint32_t s = 0; s < SITES; s++)
		CHECK(recording_add_site(&rec) == 0 && recording_site_lane(&rec, s, 0) == 0);
	for (uint64_t i = 0; i < blocks_added; i++) {
		occurrence[held] = i;
		table[held++] = address += 4096;
		CHECK(recording_alloc(&rec, table[held - 1], 0, 16 + check_random(&seed) % 497, 1) ==
		      0);
		if (i % 4 == 3) {
			uint64_t k = check_random(&seed) % held;
			recording_free(&rec, table[k]);
			held--;
			table[k] = table[held];
			occurrence[k] = occurrence[held];
		}
		if (ring[i % 8])
			recording_free(&rec, ring[i % 8]);
		ring[i % 8] = address += 4096;
		CHECK(recording_alloc(&rec, ring[i % 8], 1, 64, 1) == 0);
	}
	CHECK(recording_build(&rec, &im, NULL, &built) == 0);
	CHECK_EQ_U64(im.sites[0].alloc_count, blocks_added);
	CHECK_EQ_U64(im.sites[0].entry_count, RECORDING_WINDOW_MAX);
	CHECK_EQ_U64(im.sites[1].entry_count, RECORDING_WINDOW);
	CHECK_EQ_U64(im.record.folded_count,
		     2 * blocks_added - RECORDING_WINDOW_MAX - RECORDING_WINDOW);
	uint64_t table_slots = 0, folded_held = 0;
	for (uint32_t k = 0; k < im.sites[0].pool_count; k++)
		table_slots += im.pools[im.sites[0].first_pool + k].slot_count;
	for (uint64_t k = 0; k < held; k++)
		folded_held += occurrence[k] >= RECORDING_WINDOW_MAX;
	CHECK(folded_held > 0 && table_slots >= folded_held); /* alive at the end, in slots */

	size_t len = check_sound(&im);
	free(table);
	free(occurrence);
	recording_built_free(&built);
	recording_fini(&rec);
	return len;
}

/* Records four blocks from site 0, each freed at once, then lets damage spoil
 * site 0's log, and checks that the build refuses it. */
static void build_refuses(void (*damage)(struct recording_ended *log))
{
	struct plan_site input_sites[SITES];
	struct plan_image im = base_image(input_sites, 5, 105);
	struct recording_built built;
	struct recording rec;

	CHECK(recording_init(&rec) == 0);
	for (uint32_t s = 0; s < SITES; s++)
		CHECK(recording_add_site(&rec) == 0 && recording_site_lane(&rec, s, 0) == 0);
	for (uint64_t a = 1; a <= 4; a++) {
		CHECK(recording_alloc(&rec, a * 4096, 0, 64, 1) == 0);
		recording_free(&rec, a * 4096);
	}
	CHECK(rec.sites[0].ended_capacity >= 4);
	damage(rec.sites[0].ended);
	CHECK(recording_build(&rec, &im, NULL, &built) == -EINVAL);
	recording_built_free(&built);
	recording_fini(&rec);
}

static void foreign_entry(struct recording_ended *log)
{
	log[2].occurrence = log[3].occurrence;
}

static void missing_entry(struct recording_ended *log)
{
	memset(&log[1], 0, sizeof(log[1]));
}

/* A log slot that holds another occurrence's entry, or none (which the recording
 * never leaves), makes the build fail. */
static void check_bad_log(void)
{
	build_refuses(foreign_entry);
	build_refuses(missing_entry);
}

int main(void)
{
	struct plan_site input_sites[SITES];
	struct recording_built built, built2;
	struct plan_entry *decoded, *replanned;
	struct plan_image im = base_image(input_sites, 7, 100);
	struct recording rec, small;
	struct model m, m_small;
	char dir[] = "/tmp/memplan-test-XXXXXX", path[256];
	void *buf;
	size_t len;

	check_lanes();
	check_bad_log();
	check_in_place_runs(1000);
	check_in_place_runs(5000);
	size_t short_plan = check_folding(100000), long_plan = check_folding(1000000);
	CHECK(long_plan < short_plan + short_plan / 100); /* bounded by behaviour */
	short_plan = check_pile_up(3 * RECORDING_WINDOW_MAX);
	long_plan = check_pile_up(6 * RECORDING_WINDOW_MAX);
	CHECK(long_plan < short_plan + short_plan / 10);

	/* One lane, no planner: the entries come out encoded, in-place reallocs too. */
	struct recording one;
	struct plan_image im_one = base_image(input_sites, 6, 99);
	CHECK(recording_init(&one) == 0);
	struct model m_one = run_program(&one, OPS, 1);
	CHECK(recording_build(&one, &im_one, NULL, &built) == 0);
	CHECK(im_one.entries == NULL);
	check_built(&im_one, &m_one);
	recording_built_free(&built);
	recording_fini(&one);
	free(m_one.e);

	CHECK(recording_init(&rec) == 0);
	m = run_program(&rec, OPS, 2);
	CHECK(recording_build(&rec, &im, NULL, &built) == 0);
	check_built(&im, &m);

	/* Re-planning keeps the entries valid. */
	struct plan_image replan = im;
	CHECK(plan_image_entries(&im, &decoded) == 0);
	replan.entries = decoded;
	struct plan_chunk *chunks;
	CHECK(plan_builder_replan(&replan, NULL, &replanned, &chunks) == 0);
	check_built(&replan, &m);
	free(replanned);
	free(chunks);
	/* A layout already within the planner's slack of the least arena its blocks
	 * allow keeps its offsets; one above it is packed again. */
	struct planner_options loose = {.slack = 100.0}, tight = {.slack = 0.01};
	replan = im;
	replan.entries = decoded;
	CHECK(plan_builder_replan(&replan, &loose, &replanned, &chunks) == 0);
	CHECK_EQ_U64(replan.record.arena_bytes, im.record.arena_bytes);
	for (uint64_t i = 0; i < im.record.entry_count; i++)
		CHECK_EQ_U64(replanned[i].offset_bytes, decoded[i].offset_bytes);
	free(replanned);
	free(chunks);
	replan = im;
	replan.entries = decoded;
	replan.record.arena_bytes = 100 * im.record.arena_bytes;
	CHECK(plan_builder_replan(&replan, &tight, &replanned, &chunks) == 0);
	CHECK(replan.record.arena_bytes <= im.record.arena_bytes);
	check_built(&replan, &m);
	free(replanned);
	free(chunks);
	/* Region by region too: in-place entries follow their blocks, alignment holds. */
	replan = im;
	replan.entries = decoded;
	replan.record.flags |= PLAN_IMAGE_THREAD_REGIONS;
	CHECK(plan_builder_replan(&replan, NULL, &replanned, &chunks) == 0);
	check_built(&replan, &m);
	free(chunks);

	/* Bad events are refused, not recorded. */
	CHECK(recording_alloc(&rec, 1 << 30, SITES, 16, 1) == -EINVAL);
	CHECK(recording_alloc(&rec, 1 << 30, 0, 16, 3) == -EINVAL);
	CHECK(recording_alloc(&rec, 1 << 30, 0, 0, 1) == -EINVAL);
	CHECK_EQ_U64(rec.entry_count, m.count);

	/* The store: a second executable is added; the same one from another process
	 * with fewer entries is not; a new recording replaces the file. */
	CHECK(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/app.plan", dir);
	CHECK(plan_store_merge(path, 11, &im, PLAN_STORE_LOCK_WAIT_MS) == 0);
	struct plan_image other = base_image(input_sites, 8, 101);
	CHECK(recording_init(&small) == 0);
	m_small = run_program(&small, 100, 1);
	CHECK(recording_build(&small, &other, NULL, &built2) == 0);
	CHECK(other.entries == NULL); /* one lane, no planner: encoded as built */
	check_built(&other, &m_small);
	CHECK(plan_store_merge(path, 11, &other, PLAN_STORE_LOCK_WAIT_MS) == 0);
	struct plan_image smaller = other;
	smaller.record.exe_key = 7;
	smaller.record.pid = 102;
	CHECK(plan_store_merge(path, 11, &smaller, PLAN_STORE_LOCK_WAIT_MS) == 0);
	CHECK(plan_file_load(path, &buf, &len, NULL, 0) == 0);
	CHECK_EQ_U64(plan_file_header(buf)->image_count, 2);
	struct plan_image first;
	plan_file_image(buf, 0, &first);
	CHECK_EQ_U64(first.record.entry_count, m.count);
	free(buf);
	CHECK(plan_store_merge(path, 12, &other, PLAN_STORE_LOCK_WAIT_MS) == 0);
	CHECK(plan_file_load(path, &buf, &len, NULL, 0) == 0);
	CHECK_EQ_U64(plan_file_header(buf)->image_count, 1);
	CHECK_EQ_U64(plan_file_header(buf)->record_id, 12);
	free(buf);
	unlink(path);
	CHECK(rmdir(dir) == 0); /* no temp or lock file left behind */

	free(decoded);
	free(replanned);
	recording_built_free(&built);
	recording_built_free(&built2);
	free(m.e);
	free(m_small.e);
	recording_fini(&rec);
	recording_fini(&small);
	return 0;
}
