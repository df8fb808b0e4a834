/* Naming missed call sites, see missed_sites.h. */
#define _GNU_SOURCE
#include "missed_sites.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "image_match.h"
#include "site_identity.h"

static bool image_site(const struct plan_image *im, uint64_t key, uint32_t *site)
{
	for (uint32_t s = 0; s < im->record.site_count; s++)
		if (im->sites[s].key == key) {
			*site = s;
			return true;
		}
	return false;
}

bool missed_site_find(const void *buf, uint64_t key, const char *exe, struct plan_image *image,
		      uint32_t *site)
{
	const uint32_t n = plan_file_header(buf)->image_count;
	const char *slash = exe ? strrchr(exe, '/') : NULL;
	const char *name = slash ? slash + 1 : exe;
	struct plan_image im;

	/* The executable's own images first: they are where the statistics
	 * came from. Another's has the key only for the same frames (all in
	 * shared libraries), which it names the same. */
	for (int pass = name ? 0 : 1; pass < 2; pass++)
		for (uint32_t i = 0; i < n; i++) {
			plan_file_image(buf, i, &im);
			if (pass == 0 && strcmp(image_match_exe_name(&im), name))
				continue;
			if (image_site(&im, key, site)) {
				*image = im;
				return true;
			}
		}
	return false;
}

void missed_site_name(const void *buf, uint64_t key, const char *exe, uint32_t depth,
		      struct symbolizer *sym, char *out, size_t cap)
{
	struct plan_image im;
	struct site_identity id;
	uint32_t site;

	if (buf && missed_site_find(buf, key, exe, &im, &site) &&
	    site_identity_build(&im, site, depth ? depth : im.record.depth, sym, &id) == 0) {
		site_identity_name(&id, false, out, cap);
		site_identity_free(&id);
		if (*out)
			return;
	}
	snprintf(out, cap, "site %016" PRIx64, key);
}
