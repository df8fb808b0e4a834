/* Peak and per-site summaries of a plan image. See plan_summary.h. */
#include "plan_summary.h"

#include <errno.h>
#include <stdlib.h>

struct event {
	uint64_t t;
	int64_t delta_bytes; /* negative: a free */
};

static int event_cmp(const void *pa, const void *pb)
{
	const struct event *a = pa, *b = pb;

	if (a->t != b->t)
		return a->t < b->t ? -1 : 1;
	/* Frees first at equal times: lifetimes are half-open. */
	return (a->delta_bytes > 0) - (b->delta_bytes > 0);
}

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
	uint64_t n = image->record.entry_count, events = 0;
	uint32_t site_count = image->record.site_count;
	struct site_summary *sums;
	struct event *ev;
	int64_t live = 0, best = 0;
	uint64_t best_t = 0;

	struct plan_entry *decoded = NULL;
	const struct plan_entry *entries = image->entries;

	if (!entries) { /* straight from the reader: still encoded */
		if (plan_image_entries(image, &decoded) < 0)
			return -ENOMEM;
		entries = decoded;
	}
	sums = calloc(site_count ? site_count : 1, sizeof(*sums));
	ev = malloc((n ? 2 * n : 1) * sizeof(*ev));
	if (!sums || !ev) {
		free(sums);
		free(ev);
		free(decoded);
		return -ENOMEM;
	}
	for (uint64_t i = 0; i < n; i++) {
		const struct plan_entry *e = &entries[i];
		if (e->in_place_of)
			continue; /* its bytes are its block's, already counted */
		ev[events++] = (struct event){e->t_start, (int64_t)e->size_bytes};
		if (e->t_end != PLAN_T_INFINITY)
			ev[events++] = (struct event){e->t_end, -(int64_t)e->size_bytes};
	}
	qsort(ev, events, sizeof(*ev), event_cmp);
	for (uint64_t i = 0; i < events; i++) {
		live += ev[i].delta_bytes;
		if (live > best) {
			best = live;
			best_t = ev[i].t;
		}
	}
	free(ev);

	for (uint32_t s = 0; s < site_count; s++)
		sums[s].site = s;
	for (uint64_t i = 0; i < n; i++) {
		const struct plan_entry *e = &entries[i];
		struct site_summary *sum = &sums[e->site];
		sum->allocations++;
		sum->total_bytes += e->size_bytes;
		if (!e->in_place_of && best && e->t_start <= best_t && best_t < e->t_end) {
			sum->bytes_at_peak += e->size_bytes;
			sum->blocks_at_peak++;
		}
	}
	free(decoded);
	qsort(sums, site_count, sizeof(*sums), summary_cmp);
	*out = sums;
	*t_peak = best_t;
	*peak_bytes = (uint64_t)best;
	return 0;
}
