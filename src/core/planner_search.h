/* Exact improvement for one part of the timeline: a branch-and-bound search over
 * canonical solutions in the spirit of MiniMalloc (Moffitt, ASPLOS'24). Internal to
 * the planner. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "planner_greedy.h"

struct search_params {
	uint64_t target_bytes; /* stop at or below this height */
	double deadline_s;     /* planner_now_s() time to give up */
	unsigned threads;
	void (*progress)(void *ctx, uint64_t best_bytes, uint64_t lower_bound_bytes,
			 double elapsed_s);
	void *progress_ctx;
	uint64_t lower_bound_bytes; /* for progress reports only */
	double t0_s;
};

/* Tries to lower *arena_bytes (the height of the valid plan in off) towards
 * target_bytes; off and *arena_bytes are replaced only by a better valid plan.
 * Returns 0 (whether or not it improved) or -ENOMEM. May allocate; may use
 * params->threads threads. */
int search_improve(const struct plan_item *it, size_t m, const struct search_params *params,
		   uint64_t *off, uint64_t *arena_bytes);
