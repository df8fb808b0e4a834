/* Plan file v2, the one-pass streaming validator on a plan of several mebibytes and
 * two images: every entry is handed to the caller exactly once and in order, the
 * regions reported done come in order and cover the file, a block of entries broken
 * past the first chunk is found, and a corrupt file is reported as corrupt even
 * when it is also structurally broken. */
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "check.h"
#include "plan_file.h"

#define SITES	7
#define ENTRIES 400000 /* per image: about 2 MiB encoded */

static const char strings[] = "/bin/prog\0prog\0";
static struct plan_module module = {.key = 1, .path_offset = 0, .path_bytes = 9};
static struct plan_frame frame = {0, 0, 0x10};

static struct plan_image make_image(uint64_t key, struct plan_site *sites,
				    struct plan_entry *entries)
{
	struct plan_image im = {0};
	uint64_t first = 0;

	for (uint32_t s = 0; s < SITES; s++) {
		/* Uneven runs, one of them empty. */
		uint64_t count = s == SITES - 1 ? ENTRIES - first : s == 2 ? 0 : ENTRIES / 9 + s;
		sites[s] = (struct plan_site){
		    .key = key + s, .first_entry = first, .entry_count = count, .frame_count = 1};
		for (uint64_t k = 0; k < count; k++)
			entries[first + k] = (struct plan_entry){.site = s,
								 .occurrence = (uint32_t)k,
								 .size_bytes = 16 + (k % 7) * 16,
								 .offset_bytes = (k % 100) * 128,
								 .t_start = k,
								 .t_end = k + 1,
								 .align_bytes = 16};
		first += count;
	}
	im.record = (struct plan_image_record){.exe_key = key,
					       .arena_bytes = 100 * 128,
					       .entry_count = ENTRIES,
					       .depth = 4,
					       .module_count = 1,
					       .site_count = SITES,
					       .frame_count = 1,
					       .exe_path_bytes = 9,
					       .strings_bytes = sizeof(strings)};
	im.strings = strings;
	im.modules = &module;
	im.sites = sites;
	im.frames = &frame;
	im.entries = entries;
	return im;
}

static struct plan_entry table[2][ENTRIES];

struct seen {
	const char *buf;
	size_t done_end;
	uint64_t entries[2], blocks[2];
	int regions;
};

static void done(const void *start, size_t bytes, void *ctx)
{
	struct seen *seen = ctx;

	CHECK((const char *)start == seen->buf + seen->done_end); /* in order, no gap */
	CHECK(bytes > 0);
	seen->done_end += bytes;
	seen->regions++;
}

static void entries(uint32_t image, const struct plan_entry *first, uint64_t count, void *ctx)
{
	struct seen *seen = ctx;
	struct plan_image im;

	CHECK(image < 2);
	plan_file_image(seen->buf, image, &im);
	CHECK(count > 0 && count <= PLAN_BLOCK_ENTRIES);
	/* Each once, in order, as written. */
	CHECK(memcmp(first, &table[image][seen->entries[image]], count * sizeof(*first)) == 0);
	/* Handed over before their block is reported done. */
	CHECK(seen->buf + seen->done_end <=
	      seen->buf + im.record.entries_offset + im.blocks[seen->blocks[image]]);
	seen->entries[image] += count;
	seen->blocks[image]++;
}

static void reseal(char *buf, size_t len)
{
	((struct plan_file_header *)buf)->checksum = XXH3_64bits(buf + 32, len - 32);
}

static int validate(char *buf, size_t len, struct seen *seen, char *why, size_t why_len)
{
	const struct plan_file_stream stream = {done, entries, seen};

	memset(seen, 0, sizeof(*seen));
	seen->buf = buf;
	return plan_file_validate_streaming(buf, len, why, why_len, &stream);
}

int main(void)
{
	static struct plan_site sites[2][SITES];
	struct plan_image images[2] = {make_image(100, sites[0], table[0]),
				       make_image(200, sites[1], table[1])};
	struct seen seen;
	char why[256];
	void *out;
	size_t len;

	CHECK(plan_file_serialize(images, 2, 5, &out, &len) == 0);
	char *buf = out;

	/* Sound: every entry once, and every byte reported done. */
	CHECK(validate(buf, len, &seen, why, sizeof(why)) == 0);
	CHECK_EQ_U64(seen.entries[0], ENTRIES);
	CHECK_EQ_U64(seen.entries[1], ENTRIES);
	CHECK_EQ_U64(seen.done_end, len);
	CHECK(seen.regions > 4);
	CHECK(plan_file_validate(buf, len, why, sizeof(why)) == 0);

	/* A block of the second image, mebibytes in, broken (a reserved flag of its first
	 * entry) and resealed: found. */
	struct plan_image im;
	plan_file_image(buf, 1, &im);
	uint64_t late_block = 0;
	for (uint32_t s = 0; s < SITES; s++)
		late_block += plan_site_blocks(im.sites[s].entry_count);
	late_block -= 2; /* the last site's second-to-last block */
	char *late = buf + im.record.entries_offset + im.blocks[late_block];
	CHECK(late - buf > (1 << 21));
	*late |= 0x40;
	reseal(buf, len);
	CHECK(validate(buf, len, &seen, why, sizeof(why)) < 0);
	CHECK(strstr(why, "image 1: entries of site 6 are malformed") != NULL);
	CHECK_EQ_U64(seen.done_end, len); /* the pass still goes to the end */
	CHECK(seen.entries[1] > 0 && seen.entries[1] < ENTRIES);
	CHECK(plan_file_validate(buf, len, why, sizeof(why)) < 0);
	CHECK(strstr(why, "malformed") != NULL);

	/* Broken and not resealed: a corrupt file, whatever else is wrong. */
	buf[len - 1] ^= 1;
	CHECK(validate(buf, len, &seen, why, sizeof(why)) < 0);
	CHECK(strstr(why, "checksum mismatch") != NULL);
	CHECK(plan_file_validate(buf, len, why, sizeof(why)) < 0);
	CHECK(strstr(why, "checksum mismatch") != NULL);

	/* Only the tables broken (an out-of-range depth), not resealed: corrupt too. */
	buf[len - 1] ^= 1;
	*late &= ~0x40;
	reseal(buf, len);
	CHECK(plan_file_validate(buf, len, why, sizeof(why)) == 0);
	struct plan_image_record *rec =
	    (struct plan_image_record *)(buf + plan_file_header(buf)->images_offset);
	rec->depth = 0;
	CHECK(plan_file_validate(buf, len, why, sizeof(why)) < 0);
	CHECK(strstr(why, "checksum mismatch") != NULL);
	reseal(buf, len);
	CHECK(validate(buf, len, &seen, why, sizeof(why)) < 0);
	CHECK(strstr(why, "image 0: call-site depth 0 out of range") != NULL);
	CHECK_EQ_U64(seen.entries[0], 0); /* nothing handed over from a broken file */

	free(buf);
	return 0;
}
