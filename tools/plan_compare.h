/* Comparing two plans, for memplan diff and check: the figures of each pair of
 * process images (image_match.h) and of all images, and the call sites whose
 * bytes at the peak or allocation counts changed, sites paired by identity
 * (site_identity.h).
 *
 * Sites of one image with the same chain and lines are counted as one (a build
 * that duplicates a call, unrolling a loop, changes no figure). Sites are
 * paired by chain and lines; those left, by chain alone, in the order of their
 * lines (code that moved); those still left are new, or gone. */
#pragma once

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "image_match.h"
#include "plan_file.h"
#include "plan_summary.h"
#include "site_identity.h"
#include "symbolize.h"

/* A site, or the sites of one identity, in base and in head. */
struct site_change {
	const struct site_identity *id; /* head's, or base's for a site gone */
	bool in_base, in_head;
	uint64_t base_peak_bytes, head_peak_bytes; /* requested bytes live at the peak */
	uint64_t base_allocs, head_allocs;
};

struct image_change {
	struct image_pair pair;
	struct plan_image base, head; /* valid where pair.base, pair.head >= 0 */
	struct plan_figures base_figures, head_figures;
	/* Pairs only: the sites that changed, by how much their bytes at the peak
	 * changed, then their allocations (most first), then name. */
	struct site_change *sites;
	size_t site_count;
	size_t paired_sites, new_sites, gone_sites; /* of the site groups */
	/* Owned: each side's identities, one per site group. */
	struct site_identity *base_ids, *head_ids;
	size_t base_id_count, head_id_count;
};

struct plan_comparison {
	struct image_change *images; /* in image_match's order */
	size_t image_count;
	size_t paired; /* images of head paired with one of base */
	struct plan_figures base_total, head_total;
};

/* Compares two validated plan buffers into *out, reading frames' symbols
 * from the plans, or from sym for a plan without them (sym may be NULL). The
 * images point into the buffers, which must outlive *out. Returns 0 or
 * -ENOMEM. May allocate; free with plan_comparison_free. */
int plan_compare(const void *base, const void *head, struct symbolizer *sym,
		 struct plan_comparison *out);

void plan_comparison_free(struct plan_comparison *c);

/* A site's change in bytes at the peak, and in allocations (head - base). */
static inline int64_t site_change_bytes(const struct site_change *s)
{
	return (int64_t)(s->head_peak_bytes - s->base_peak_bytes);
}

static inline int64_t site_change_allocs(const struct site_change *s)
{
	return (int64_t)(s->head_allocs - s->base_allocs);
}

/* head's change on base, in percent of base; NAN if base is 0 and head is not
 * (a new figure); 0 if both are. */
static inline double plan_change_percent(uint64_t base, uint64_t head)
{
	if (!base)
		return head ? NAN : 0.0;
	return 100.0 * ((double)head - (double)base) / (double)base;
}
