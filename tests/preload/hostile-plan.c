/* Writes a well-formed (valid checksum, in-bounds) but hostile version of a plan:
 * every entry of every image is moved so that entries alive at the same time
 * overlap in space. Replay must notice at run time and never hand out
 * overlapping live blocks. usage: hostile-plan IN OUT MODE, MODE one of
 *   zero:    every entry, and every chunk of pool slots, at offset 0;
 *   shuffle: every entry and chunk at a pseudo-random offset inside the arena
 *            (aligned as the reader demands, so that the file is accepted);
 *   badblocks: the entries left as they are, but every other block of encoded
 *            entries made undecodable (a reserved flag), the checksum made
 *            valid again: the tables pass, the blocks do not;
 *   outside: the entries left as they are, but each image's arena cut to half
 *            its size (its pools moved to its start), the checksum made valid
 *            again: every block decodes, and the entries past the new end must
 *            never be served;
 *   sizes:   the entries left as they are, but every learned frame size made
 *            another plausible one (a multiple of 8 up to 4 KiB, now and then
 *            the outermost mark): stack walks go astray, never out of the
 *            stack;
 *   nosizes: the same plan without its frame sizes: replay learns them by
 *            unwinding, as it did before plans carried them;
 *   badimage=NAME: the plan as it is, but the first site of the first image
 *            whose executable's path ends in NAME made to name frames past
 *            the image's, the checksum made valid again: the file passes its
 *            checksum, that image's tables do not hold together, and the
 *            others' do;
 *   badargs=NAME: the same, but that image's arguments made to run past its
 *            string table: a process of that executable whose own arguments
 *            are not that image's compares them, and must refuse them;
 *   tails:   the entries left as they are, but every site given a tail of its
 *            last entries (up to 1024), a site of pools too, which a recording
 *            never gives one: replay goes on in its pools and ignores it. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "atomic_file.h"
#include "plan_file.h"

/* Halves every image's arena, and reseals. Its pools (which the reader checks as
 * it loads) are moved to its start, over the entries there: only entries are
 * left outside the arena. */
static void shrink_arenas(char *buf, size_t len)
{
	struct plan_file_header *h = (struct plan_file_header *)buf;

	for (uint32_t i = 0; i < h->image_count; i++) {
		struct plan_image_record *r =
		    (void *)(buf + h->images_offset + (uint64_t)i * h->image_record_bytes);
		struct plan_image im;
		uint64_t arena = r->arena_bytes / 2 / PLAN_GRANULE_BYTES * PLAN_GRANULE_BYTES;
		plan_file_image(buf, i, &im);
		for (uint32_t k = 0; k < r->chunk_count; k++) {
			struct plan_chunk *c = (struct plan_chunk *)&im.chunks[k];
			uint64_t bytes = c->slot_count * im.pools[c->pool].slot_bytes;
			c->offset_bytes = 0;
			if (bytes > arena)
				arena = bytes;
		}
		r->arena_bytes = arena;
	}
	h->checksum = XXH3_64bits(buf + 32, len - 32);
}

/* Breaks the tables of the first image whose executable's path ends in name
 * (its first site's frames out of bounds), and reseals; false if there is none. */
static bool break_image(char *buf, size_t len, const char *name)
{
	struct plan_file_header *h = (struct plan_file_header *)buf;

	for (uint32_t i = 0; i < h->image_count; i++) {
		struct plan_image im;
		plan_file_image(buf, i, &im);
		const char *exe = im.strings + im.record.exe_path_offset;
		size_t n = strlen(exe), k = strlen(name);
		if (!im.record.site_count || n < k || strcmp(exe + n - k, name))
			continue;
		((struct plan_site *)im.sites)[0].first_frame = im.record.frame_count + 1;
		h->checksum = XXH3_64bits(buf + 32, len - 32);
		return true;
	}
	return false;
}

/* Makes the arguments of the first image whose executable's path ends in name
 * run past its string table, and reseals; false if there is none. */
static bool break_args(char *buf, size_t len, const char *name)
{
	struct plan_file_header *h = (struct plan_file_header *)buf;

	for (uint32_t i = 0; i < h->image_count; i++) {
		struct plan_image_record *r =
		    (void *)(buf + h->images_offset + (uint64_t)i * h->image_record_bytes);
		const char *exe = buf + r->strings_offset + r->exe_path_offset;
		size_t n = strlen(exe), k = strlen(name);
		if (n < k || strcmp(exe + n - k, name))
			continue;
		r->args_bytes = (uint32_t)(r->strings_bytes - r->args_offset + 1);
		h->checksum = XXH3_64bits(buf + 32, len - 32);
		return true;
	}
	return false;
}

/* Sets a reserved flag in the first entry of every other block, and reseals. */
static void break_blocks(char *buf, size_t len)
{
	struct plan_file_header *h = (struct plan_file_header *)buf;

	for (uint32_t i = 0; i < h->image_count; i++) {
		struct plan_image im;
		uint64_t blocks = 0;
		plan_file_image(buf, i, &im);
		for (uint32_t s = 0; s < im.record.site_count; s++)
			blocks += plan_site_blocks(im.sites[s].entry_count);
		for (uint64_t b = 0; b < blocks; b += 2)
			buf[im.record.entries_offset + im.blocks[b] + 4] |=
			    0x40; /* after the widths */
	}
	h->checksum = XXH3_64bits(buf + 32, len - 32);
}

/* A copy of the image's frame sizes, each replaced by another plausible one. */
static struct plan_frame_size *scrambled_sizes(const struct plan_image *im, uint64_t *seed)
{
	uint32_t n = im->record.frame_size_count;
	struct plan_frame_size *sizes = calloc(n + 1, sizeof(*sizes));

	for (uint32_t k = 0; k < n; k++) {
		*seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
		sizes[k] = im->frame_sizes[k];
		sizes[k].bytes = (*seed >> 40) % 8 == 0 ? PLAN_FRAME_OUTERMOST
							 : (uint32_t)(8 + (*seed >> 20) % 512 * 8);
	}
	return sizes;
}

int main(int argc, char **argv)
{
	char why[256];
	void *buf, *out;
	size_t len, out_len;
	uint64_t seed = 42;

	const char *mode = argc == 4 ? argv[3] : "";
	const char *bad_image = !strncmp(mode, "badimage=", 9) ? mode + 9 : NULL;
	const char *bad_args = !strncmp(mode, "badargs=", 8) ? mode + 8 : NULL;
	bool keeps_entries = !strcmp(mode, "badblocks") || !strcmp(mode, "outside") ||
			     !strcmp(mode, "sizes") || !strcmp(mode, "nosizes") ||
			     !strcmp(mode, "tails") || bad_image || bad_args;
	if (!keeps_entries && strcmp(mode, "zero") && strcmp(mode, "shuffle")) {
		fprintf(stderr, "usage: hostile-plan IN OUT zero|shuffle|badblocks|outside|"
				"sizes|nosizes|tails|badimage=NAME|badargs=NAME\n");
		return 2;
	}
	if (plan_file_load(argv[1], &buf, &len, why, sizeof(why)) < 0) {
		fprintf(stderr, "hostile-plan: %s: %s\n", argv[1], why);
		return 1;
	}
	uint32_t n = plan_file_header(buf)->image_count;
	struct plan_image *images = calloc(n, sizeof(*images));
	for (uint32_t i = 0; i < n; i++) {
		plan_file_image(buf, i, &images[i]);
		uint64_t count = images[i].record.entry_count, biggest = 0;
		struct plan_entry *entries;
		if (plan_image_entries(&images[i], &entries) < 0) {
			fprintf(stderr, "hostile-plan: out of memory\n");
			return 1;
		}
		/* The arena is made as small as the biggest block and its alignment
		 * allow, so that shuffled blocks alive at once do overlap. */
		uint64_t max_align = PLAN_GRANULE_BYTES;
		for (uint64_t e = 0; e < count; e++) {
			if (entries[e].size_bytes > biggest)
				biggest = entries[e].size_bytes;
			if (entries[e].align_bytes > max_align)
				max_align = entries[e].align_bytes;
		}
		for (uint32_t k = 0; k < images[i].record.pool_count; k++)
			if (images[i].pools[k].align_bytes > max_align)
				max_align = images[i].pools[k].align_bytes;
		uint64_t arena = (biggest + 2 * max_align) & ~(max_align - 1);
		if (keeps_entries) {
			images[i].entries = entries;
			if (!strcmp(mode, "nosizes")) {
				images[i].record.frame_size_count = 0;
				images[i].record.flags &= ~PLAN_IMAGE_FRAME_SIZES;
			}
			if (!strcmp(mode, "sizes"))
				images[i].frame_sizes = scrambled_sizes(&images[i], &seed);
			if (!strcmp(mode, "tails"))
				for (uint32_t k = 0; k < images[i].record.site_count; k++) {
					struct plan_site *site =
					    (struct plan_site *)&images[i].sites[k];
					site->tail_entries =
					    (uint32_t)(site->entry_count < 1024 ? site->entry_count
										: 1024);
				}
			continue;
		}
		/* The chunks too: a hostile plan's pools overlap everything. */
		const uint32_t chunk_count = images[i].record.chunk_count;
		struct plan_chunk *chunks = calloc(chunk_count + 1, sizeof(*chunks));
		for (uint32_t k = 0; k < chunk_count; k++) {
			const struct plan_pool *pool = &images[i].pools[images[i].chunks[k].pool];
			uint64_t bytes = pool->slot_bytes * images[i].chunks[k].slot_count;
			if (bytes > biggest)
				biggest = bytes;
		}
		arena = (biggest + 2 * max_align) & ~(max_align - 1);
		for (uint32_t k = 0; k < chunk_count; k++) {
			const struct plan_pool *pool = &images[i].pools[images[i].chunks[k].pool];
			uint64_t room = arena - pool->slot_bytes * images[i].chunks[k].slot_count;
			uint64_t align = pool->align_bytes > PLAN_GRANULE_BYTES ? pool->align_bytes
									       : PLAN_GRANULE_BYTES;
			chunks[k] = images[i].chunks[k];
			chunks[k].offset_bytes = 0;
			if (!strcmp(mode, "shuffle")) {
				seed = seed * 6364136223846793005ull + 1442695040888963407ull;
				chunks[k].offset_bytes = (seed >> 20) % (room + 1) / align * align;
			}
		}
		images[i].chunks = chunks;
		for (uint64_t e = 0; e < count; e++) {
			uint64_t room = arena - entries[e].size_bytes, off = 0;
			if (!strcmp(mode, "shuffle")) {
				seed = seed * 6364136223846793005ull + 1442695040888963407ull;
				off = (seed >> 20) % (room + 1);
			}
			uint64_t align = entries[e].align_bytes > PLAN_GRANULE_BYTES
					     ? entries[e].align_bytes
					     : PLAN_GRANULE_BYTES;
			entries[e].offset_bytes = off / align * align;
			entries[e].in_place_of = 0;
		}
		images[i].entries = entries;
		images[i].record.arena_bytes = arena;
	}
	if (plan_file_serialize(images, n, plan_file_header(buf)->record_id, &out, &out_len) < 0) {
		fprintf(stderr, "hostile-plan: cannot serialise the plan\n");
		return 1;
	}
	if (!strcmp(mode, "badblocks"))
		break_blocks(out, out_len);
	if (!strcmp(mode, "outside"))
		shrink_arenas(out, out_len);
	if (bad_image && !break_image(out, out_len, bad_image)) {
		fprintf(stderr, "hostile-plan: no image of %s with a site\n", bad_image);
		return 1;
	}
	if (bad_args && !break_args(out, out_len, bad_args)) {
		fprintf(stderr, "hostile-plan: no image of %s\n", bad_args);
		return 1;
	}
	if (atomic_file_write(argv[2], out, out_len) < 0) {
		fprintf(stderr, "hostile-plan: cannot write %s\n", argv[2]);
		return 1;
	}
	return 0;
}
