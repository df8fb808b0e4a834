/* How many frames of a stack it takes to name its call site, in a recorded plan:
 * for depth d from 1 to the plan's, the share of each image's allocations whose
 * site is the only one of the image with its first d frames. Replay identifies
 * a call by its whole stack (docs/call-sites.md); a cheaper identity that read
 * only the first d frames would name correctly only the calls counted here.
 *
 * usage: site-prefixes PLAN...
 * One line per image and depth: "PLAN image I depth D: S of N sites, P% of A
 * allocations". */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "plan_file.h"

static bool same_prefix(const struct plan_image *im, uint32_t a, uint32_t b, uint32_t depth)
{
	const struct plan_site *sa = &im->sites[a], *sb = &im->sites[b];

	if (sa->frame_count < depth || sb->frame_count < depth)
		return a == b;
	for (uint32_t k = 0; k < depth; k++) {
		const struct plan_frame *fa = &im->frames[sa->first_frame + k];
		const struct plan_frame *fb = &im->frames[sb->first_frame + k];
		if (fa->module != fb->module || fa->offset != fb->offset)
			return false;
	}
	return true;
}

static void report(const char *path, uint32_t index, const struct plan_image *im)
{
	const uint32_t sites = im->record.site_count;

	for (uint32_t depth = 1; depth <= im->record.depth; depth++) {
		uint64_t all = 0, named = 0;
		uint32_t alone = 0;
		for (uint32_t s = 0; s < sites; s++) {
			uint32_t sharing = 0;
			for (uint32_t t = 0; t < sites && sharing < 2; t++)
				sharing += same_prefix(im, s, t, depth);
			all += im->sites[s].alloc_count;
			if (sharing == 1) {
				alone++;
				named += im->sites[s].alloc_count;
			}
		}
		printf("%s image %" PRIu32 " depth %" PRIu32 ": %" PRIu32 " of %" PRIu32
		       " sites, %.1f%% of %" PRIu64 " allocations\n",
		       path, index, depth, alone, sites, all ? 100.0 * (double)named / (double)all : 0.0,
		       all);
	}
}

int main(int argc, char **argv)
{
	int status = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: site-prefixes PLAN...\n");
		return 2;
	}
	for (int a = 1; a < argc; a++) {
		const void *buf;
		size_t len;
		char why[256];
		if (plan_file_map(argv[a], &buf, &len, why, sizeof(why)) < 0) {
			fprintf(stderr, "site-prefixes: %s: %s\n", argv[a], why);
			status = 1;
			continue;
		}
		const struct plan_file_header *h = plan_file_header(buf);
		for (uint32_t i = 0; i < h->image_count; i++) {
			struct plan_image im;
			plan_file_image(buf, i, &im);
			report(argv[a], i, &im);
		}
		plan_file_unmap((void *)buf, len);
	}
	return status;
}
