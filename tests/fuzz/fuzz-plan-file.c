/* libFuzzer target for the plan reader, the gate between a hostile file and the
 * replay hot path. Most inputs get their checksum recomputed first, so that the
 * fuzzer exercises the structural checks behind it rather than the hash. A plan
 * that passes is then read the way `memplan show` reads it; every input is also
 * read from a file the way replay reads it, an image at a time. */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "entry_codec.h"
#include "plan_file.h"
#include "plan_summary.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input, past its first byte (an entry count), as one encoded block: replay's
 * decoder must accept exactly what the full one accepts, with the same values. */
static void decoders_agree(const uint8_t *data, size_t size)
{
	static struct plan_entry full[PLAN_BLOCK_ENTRIES];
	static _Atomic uint64_t places[PLAN_BLOCK_ENTRIES];
	uint32_t n;

	if (size < 1)
		return;
	n = data[0] % PLAN_BLOCK_ENTRIES + 1;
	int a = entry_codec_decode(data + 1, size - 1, n, 0, 0, full);
	int b = entry_codec_decode_places(data + 1, size - 1, n, places);
	if (a != b)
		abort();
	for (uint32_t k = 0; a == 0 && k < n; k++)
		if (atomic_load(&places[k]) !=
		    entry_codec_place(full[k].offset_bytes, full[k].size_bytes))
			abort();
}

/* Reads the plan buf of size bytes from a file as replay does: the index, then
 * each image's strings and tables. A plan that passed the full validation
 * (sound) must pass these too; an image that passes must be usable. */
static void read_as_replay(const void *buf, size_t size, bool sound)
{
	static int fd = -1;
	char why[256];
	void *index;

	if (fd < 0 && (fd = memfd_create("plan", 0)) < 0)
		abort();
	if (ftruncate(fd, 0) < 0 || pwrite(fd, buf, size, 0) != (ssize_t)size)
		abort();
	if (plan_file_read_index(fd, size, true, &index, why, sizeof(why)) < 0) {
		if (sound)
			abort();
		return;
	}
	const struct plan_file_header *h = plan_file_header(index);
	for (uint32_t i = 0; i < h->image_count; i++) {
		struct plan_image_record rec;
		if (plan_file_read_records(fd, index, i, 1, &rec) < 0)
			abort(); /* the index said the table lies inside the file */
		char args[64];
		uint32_t args_bytes, span;
		uint64_t at;
		int r = plan_file_args_span(&rec, i, size, &at, &span, why, sizeof(why));
		if (r == 0) {
			if (span && (at > size || span > size - at))
				abort(); /* the arguments said to lie in the file do */
			if (plan_file_read_args(fd, at, span, args, sizeof(args), &args_bytes, why,
						sizeof(why)) < 0)
				abort(); /* and can be read */
			r = plan_file_read_image(fd, index, size, i, why, sizeof(why));
		}
		if (r < 0) {
			if (sound)
				abort();
			continue;
		}
		struct plan_image im;
		plan_file_image(index, i, &im);
		for (uint32_t s = 0; s < im.record.site_count; s++) {
			const struct plan_site *site = &im.sites[s];
			for (uint32_t f = 0; f < site->frame_count; f++)
				(void)plan_image_module_path(&im,
							     im.frames[site->first_frame + f].module);
		}
	}
	plan_file_unmap(index, size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char why[256];
	uint64_t *buf = malloc(size + 8); /* 8-byte aligned, as a mapping is */
	struct plan_file_header *h = (void *)buf;

	decoders_agree(data, size);
	memcpy(buf, data, size);
	if (size >= sizeof(*h) && (size % 4) != 3) {
		h->file_bytes = size;
		h->checksum = XXH3_64bits((char *)buf + 32, size - 32);
	}
	bool sound = plan_file_validate(buf, size, why, sizeof(why)) == 0;
	read_as_replay(buf, size, sound);
	if (sound) {
		for (uint32_t i = 0; i < h->image_count; i++) {
			struct plan_image im;
			struct site_summary *sums;
			uint64_t t_peak, peak;
			struct plan_entry *entries;
			plan_file_image(buf, i, &im);
			if (plan_image_entries(&im, &entries) < 0)
				abort();
			for (uint32_t s = 0; s < im.record.site_count; s++) {
				const struct plan_site *site = &im.sites[s];
				for (uint64_t k = 0; k < site->entry_count; k++) {
					const struct plan_entry *e =
					    &entries[site->first_entry + k];
					/* The reader must not let an entry out of the arena. */
					if (e->site != s || e->occurrence != k ||
					    e->offset_bytes + e->size_bytes > im.record.arena_bytes)
						abort();
				}
				for (uint32_t f = 0; f < site->frame_count; f++)
					(void)plan_image_module_path(
					    &im, im.frames[site->first_frame + f].module);
			}
			if (plan_summary_sites(&im, &sums, &t_peak, &peak) == 0)
				free(sums);
			free(entries);
		}
	}
	free(buf);
	return 0;
}
