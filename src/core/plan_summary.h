/* What a plan says about the program: when memory peaks, and which call sites hold
 * it then. Used by `memplan show` and by the tests. The recording counted all of
 * it as the program ran (recording.h), folded allocations too, so a summary
 * reads the site records alone, never the entries. Pure: no global state. */
#pragma once

#include <stdint.h>

#include "plan_file.h"

struct site_summary {
	uint32_t site;
	uint64_t bytes_at_peak; /* requested bytes of this site live at the peak */
	uint64_t blocks_at_peak;
	uint64_t allocations;
	uint64_t total_bytes;
};

/* Fills *out with one malloc'ed summary per site of image, sorted by bytes live at
 * the peak, then by total bytes, then by site index (descending, descending,
 * ascending), and sets *t_peak to the first moment at which the requested bytes
 * live are the most (*peak_bytes). Returns 0 or -ENOMEM. May allocate. */
int plan_summary_sites(const struct plan_image *image, struct site_summary **out, uint64_t *t_peak,
		       uint64_t *peak_bytes);

/* The figures of an image that reports compare from plan to plan. */
struct plan_figures {
	uint64_t requested_peak_bytes; /* the most bytes requested live at once */
	uint64_t lower_bound_bytes;    /* the same in whole granules, the arena's floor */
	uint64_t arena_bytes;
	uint64_t allocations; /* recorded: exact entries and those folded into pools */
};

/* The figures of image. Does not allocate. */
struct plan_figures plan_summary_figures(const struct plan_image *image);
