/* Peak and per-site summaries of a plan image. See plan_summary.h. */
#include "plan_summary.h"

#include <errno.h>
#include <stdlib.h>

static int summary_cmp(const void *pa, const void *pb)
{
	const struct site_summary *a = pa, *b = pb;

	if (a->bytes_at_peak != b->bytes_at_peak)
		return a->bytes_at_peak > b->bytes_at_peak ? -1 : 1;
	if (a->total_bytes != b->total_bytes)
		return a->total_bytes > b->total_bytes ? -1 : 1;
	return a->site < b->site ? -1 : a->site > b->site;
}

int plan_summary_sites(const struct plan_image *image, struct site_summary **out, uint64_t *t_peak,
		       uint64_t *peak_bytes)
{
	uint32_t site_count = image->record.site_count;
	struct site_summary *sums = calloc(site_count ? site_count : 1, sizeof(*sums));

	if (!sums)
		return -ENOMEM;
	for (uint32_t s = 0; s < site_count; s++) {
		const struct plan_site *site = &image->sites[s];
		sums[s] = (struct site_summary){
		    .site = s,
		    .bytes_at_peak = site->peak_bytes,
		    .blocks_at_peak = site->peak_blocks,
		    .allocations = site->alloc_count,
		    .total_bytes = site->total_bytes,
		};
	}
	qsort(sums, site_count, sizeof(*sums), summary_cmp);
	*out = sums;
	*t_peak = image->record.requested_peak_time;
	*peak_bytes = image->record.requested_peak_bytes;
	return 0;
}

struct plan_figures plan_summary_figures(const struct plan_image *image)
{
	const struct plan_image_record *r = &image->record;

	return (struct plan_figures){
	    .requested_peak_bytes = r->requested_peak_bytes,
	    .lower_bound_bytes = r->lower_bound_bytes,
	    .arena_bytes = r->arena_bytes,
	    .allocations = r->entry_count + r->folded_count,
	};
}
