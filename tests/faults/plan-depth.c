/* Rewrites the call-site depth of every image of a plan to N and makes the
 * checksum valid again, leaving every other byte as it is: a plan that only
 * its depth makes hostile. Works on the raw bytes, so that it also rewrites
 * plans of format version 2 (the format of the builds before the depth limit,
 * which the fault suite is run against too) as well as this tree's format.
 * usage: plan-depth IN OUT N */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "atomic_file.h"
#include "plan_file.h"

/* Where depth sits in an image record of format version 2: after six 64-bit
 * fields and the pid. */
#define V2_DEPTH_OFFSET 52

int main(int argc, char **argv)
{
	if (argc != 4 || atol(argv[3]) < 1) {
		fprintf(stderr, "usage: plan-depth IN OUT N\n");
		return 2;
	}
	FILE *f = fopen(argv[1], "rb");
	if (!f) {
		perror(argv[1]);
		return 1;
	}
	fseek(f, 0, SEEK_END);
	long len = ftell(f);
	rewind(f);
	char *buf = malloc(len > 0 ? (size_t)len : 1);
	if (!buf || len < (long)sizeof(struct plan_file_header) ||
	    fread(buf, 1, (size_t)len, f) != (size_t)len) {
		fprintf(stderr, "plan-depth: %s: cannot read a plan header\n", argv[1]);
		return 1;
	}
	fclose(f);
	struct plan_file_header h;
	memcpy(&h, buf, sizeof(h));
	size_t depth_at;
	if (memcmp(h.magic, PLAN_FILE_MAGIC, 8)) {
		fprintf(stderr, "plan-depth: %s: not a plan\n", argv[1]);
		return 1;
	}
	if (h.version == PLAN_FILE_VERSION) {
		depth_at = offsetof(struct plan_image_record, depth);
	} else if (h.version == 2) {
		depth_at = V2_DEPTH_OFFSET;
	} else {
		fprintf(stderr, "plan-depth: %s: format version %u unknown\n", argv[1], h.version);
		return 1;
	}
	if (depth_at + 4 > h.image_record_bytes ||
	    h.images_offset + (uint64_t)h.image_count * h.image_record_bytes > (uint64_t)len) {
		fprintf(stderr, "plan-depth: %s: image table out of bounds\n", argv[1]);
		return 1;
	}
	uint32_t depth = (uint32_t)atol(argv[3]);
	for (uint32_t i = 0; i < h.image_count; i++)
		memcpy(buf + h.images_offset + (uint64_t)i * h.image_record_bytes + depth_at, &depth,
		       sizeof(depth));
	h.checksum = XXH3_64bits(buf + 32, (size_t)len - 32);
	memcpy(buf + offsetof(struct plan_file_header, checksum), &h.checksum, sizeof(h.checksum));
	if (atomic_file_write(argv[2], buf, (size_t)len) < 0) {
		fprintf(stderr, "plan-depth: cannot write %s\n", argv[2]);
		return 1;
	}
	free(buf);
	return 0;
}
