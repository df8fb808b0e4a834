/* Plan file v1: round trip, and the reader on truncated, bit-flipped, foreign,
 * future-version and structurally hostile input (with a valid checksum, so the
 * structural checks themselves are what is tested). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "check.h"
#include "plan_file.h"

static const char strings[] = "/usr/lib/libfoo.so\0/bin/prog\0prog\0-x\0";
static struct plan_module modules[2];
static struct plan_frame frames[3] = {{0, 0, 0x1234}, {1, 0, 0x99}, {0, 0, 0x4321}};
static struct plan_site sites[2] = {
    {.key = 0xaaaa, .first_entry = 0, .entry_count = 2, .first_frame = 0, .frame_count = 2},
    {.key = 0xbbbb, .first_entry = 2, .entry_count = 1, .first_frame = 2, .frame_count = 1},
};
static struct plan_entry entries[3] = {
    {.site = 0,
     .occurrence = 0,
     .size_bytes = 100,
     .offset_bytes = 0,
     .t_start = 0,
     .t_end = 3,
     .align_bytes = 16},
    {.site = 0,
     .occurrence = 1,
     .size_bytes = 64,
     .offset_bytes = 128,
     .t_start = 1,
     .t_end = PLAN_T_INFINITY,
     .align_bytes = 64},
    {.site = 1,
     .occurrence = 0,
     .size_bytes = 10,
     .offset_bytes = 0,
     .t_start = 4,
     .t_end = 5,
     .align_bytes = 1},
};

static struct plan_image make_image(void)
{
	struct plan_image im = {0};

	modules[0] = (struct plan_module){.key = 1,
					  .path_offset = 0,
					  .path_bytes = 18,
					  .build_id_bytes = 3,
					  .build_id = {1, 2, 3}};
	modules[1] = (struct plan_module){.key = 2, .path_offset = 19, .path_bytes = 9};
	im.record = (struct plan_image_record){
	    .exe_key = 7,
	    .args_key = 8,
	    .arena_bytes = 192,
	    .lower_bound_bytes = 164,
	    .alloc_calls = 5,
	    .entry_count = 3,
	    .pid = 42,
	    .depth = 4,
	    .module_count = 2,
	    .site_count = 2,
	    .frame_count = 3,
	    .exe_path_offset = 19,
	    .exe_path_bytes = 9,
	    .args_offset = 29,
	    .args_bytes = 8,
	    .strings_bytes = sizeof(strings),
	};
	im.strings = strings;
	im.modules = modules;
	im.sites = sites;
	im.frames = frames;
	im.entries = entries;
	return im;
}

static void reseal(void *buf, size_t len)
{
	struct plan_file_header *h = buf;
	h->checksum = XXH3_64bits((char *)buf + 32, len - 32);
}

static int validate(const void *buf, size_t len)
{
	char why[256] = "";
	/* Copy into an aligned buffer of exactly len bytes, as a mapping would be. */
	void *copy = aligned_alloc(8, (len + 7) / 8 * 8 + 8);
	int r;

	memcpy(copy, buf, len);
	r = plan_file_validate(copy, len, why, sizeof(why));
	CHECK(r == 0 || why[0]); /* every failure says why */
	CHECK(!strchr(why, '\n'));
	free(copy);
	return r;
}

/* Serialises, applies a mutation to entry/site/frame fields, reseals. */
static int validate_mutated(void (*mutate)(struct plan_image *, char *buf))
{
	struct plan_image im = make_image();
	void *buf;
	size_t len;
	int r;

	CHECK(plan_file_serialize(&im, 1, 99, &buf, &len) == 0);
	mutate(&im, buf);
	reseal(buf, len);
	r = validate(buf, len);
	free(buf);
	return r;
}

static struct plan_image_record *record_of(char *buf)
{
	return (struct plan_image_record *)(buf + sizeof(struct plan_file_header));
}

static struct plan_entry *entries_of(char *buf)
{
	return (struct plan_entry *)(buf + record_of(buf)->entries_offset);
}

static void entry_outside_arena(struct plan_image *im, char *buf)
{
	entries_of(buf)[1].offset_bytes = 192; /* aligned, but 192 + 64 > 192 */
}

static void entry_huge_offset(struct plan_image *im, char *buf)
{
	entries_of(buf)[0].offset_bytes = UINT64_MAX - 15; /* wraps if added naively */
}

static void entry_misaligned(struct plan_image *im, char *buf)
{
	entries_of(buf)[1].offset_bytes = 96; /* 16-aligned, not 64 */
}

static void entry_wrong_occurrence(struct plan_image *im, char *buf)
{
	entries_of(buf)[1].occurrence = 5;
}

static void frame_bad_module(struct plan_image *im, char *buf)
{
	((struct plan_frame *)(buf + record_of(buf)->frames_offset))[2].module = 2;
}

static void site_overlapping_ranges(struct plan_image *im, char *buf)
{
	((struct plan_site *)(buf + record_of(buf)->sites_offset))[1].first_entry = 1;
}

static void table_out_of_file(struct plan_image *im, char *buf)
{
	record_of(buf)->entries_offset = 1u << 30;
}

static void count_overflow(struct plan_image *im, char *buf)
{
	record_of(buf)->entry_count = UINT64_MAX / 8;
}

static void path_without_nul(struct plan_image *im, char *buf)
{
	((struct plan_module *)(buf + record_of(buf)->modules_offset))[0].path_bytes = 19;
}

static void empty_lifetime(struct plan_image *im, char *buf)
{
	entries_of(buf)[2].t_end = entries_of(buf)[2].t_start;
}

int main(void)
{
	struct plan_image im = make_image(), back;
	void *buf;
	size_t len;

	/* Round trip. */
	CHECK(plan_file_serialize(&im, 1, 99, &buf, &len) == 0);
	CHECK(validate(buf, len) == 0);
	CHECK_EQ_U64(plan_file_header(buf)->record_id, 99);
	CHECK_EQ_U64(plan_file_header(buf)->image_count, 1);
	plan_file_image(buf, 0, &back);
	CHECK_EQ_U64(back.record.entry_count, 3);
	CHECK_EQ_U64(back.record.pid, 42);
	CHECK(memcmp(back.entries, entries, sizeof(entries)) == 0);
	CHECK(memcmp(back.sites, sites, sizeof(sites)) == 0);
	CHECK(memcmp(back.frames, frames, sizeof(frames)) == 0);
	CHECK(strcmp(plan_image_module_path(&back, 0), "/usr/lib/libfoo.so") == 0);
	CHECK(strcmp(back.strings + back.record.exe_path_offset, "/bin/prog") == 0);

	/* Every truncation is rejected. */
	for (size_t cut = 0; cut < len; cut++)
		CHECK(validate(buf, cut) < 0);

	/* Every single-bit flip is rejected (header fields or checksum). */
	for (size_t byte = 0; byte < len; byte++) {
		for (int bit = 0; bit < 8; bit++) {
			((unsigned char *)buf)[byte] ^= (unsigned char)(1u << bit);
			CHECK(validate(buf, len) < 0);
			((unsigned char *)buf)[byte] ^= (unsigned char)(1u << bit);
		}
	}
	CHECK(validate(buf, len) == 0);

	/* Foreign and future files. */
	char *copy = malloc(len);
	memcpy(copy, buf, len);
	memcpy(copy, "NOTAPLAN", 8);
	CHECK(validate(copy, len) == -EPROTO);
	memcpy(copy, buf, len);
	((struct plan_file_header *)copy)->version = 2;
	reseal(copy, len);
	CHECK(validate(copy, len) == -ENOTSUP);
	free(copy);
	free(buf);

	/* Structurally hostile files with valid checksums. */
	CHECK(validate_mutated(entry_outside_arena) == -EINVAL);
	CHECK(validate_mutated(entry_huge_offset) == -EINVAL);
	CHECK(validate_mutated(entry_misaligned) == -EINVAL);
	CHECK(validate_mutated(entry_wrong_occurrence) == -EINVAL);
	CHECK(validate_mutated(frame_bad_module) == -EINVAL);
	CHECK(validate_mutated(site_overlapping_ranges) == -EINVAL);
	CHECK(validate_mutated(table_out_of_file) == -EINVAL);
	CHECK(validate_mutated(count_overflow) == -EINVAL);
	CHECK(validate_mutated(path_without_nul) == -EINVAL);
	CHECK(validate_mutated(empty_lifetime) == -EINVAL);

	/* The writer refuses what the reader would refuse. */
	entries[1].offset_bytes = 192;
	CHECK(plan_file_serialize(&im, 1, 99, &buf, &len) == -EINVAL);
	entries[1].offset_bytes = 128;
	return 0;
}
