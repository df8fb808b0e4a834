/* The planner's constructive heuristics. Each takes one independent part of the
 * timeline as an array of items sorted by start time and writes one offset per
 * item; every result is a valid plan for that part. Internal to the planner. */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* One non-empty block of a part; t_end may be BLOCK_T_INFINITY. */
struct plan_item {
	uint64_t size_bytes, t_start, t_end, align_bytes;
	uint64_t seq; /* position in the caller's input: the last tie-break */
};

/* Seconds on CLOCK_MONOTONIC, for deadlines. */
double planner_now_s(void);

/* Stable LSD radix sort of vals[0..n) by keys[0..n) (both permuted together),
 * O(n) per significant byte: the planner sorts tens of millions of times and
 * qsort's callbacks dominated. Returns 0 or -ENOMEM. May allocate. */
int radix_sort_pairs(uint64_t *keys, uint32_t *vals, size_t n);

/* Event-order best fit: walks allocations in start order and keeps the free
 * gaps at the current moment in two ordered sets, so it is O(m log m) whatever
 * the overlap. Returns the arena in *arena_bytes; 0 or -ENOMEM. May allocate. */
int greedy_linear_scan(const struct plan_item *it, size_t m, uint64_t *off, uint64_t *arena_bytes);

enum greedy_order {
	GREEDY_BY_SIZE,	    /* largest first, ties longer lifetime first */
	GREEDY_BY_AREA,	    /* size x lifetime */
	GREEDY_BY_LIFETIME, /* longest first, ties larger first */
	GREEDY_BY_START,    /* earliest first, ties larger first */
	GREEDY_BY_CONFLICT, /* most overlapping bytes first (needs sections) */
	GREEDY_ORDER_COUNT
};

enum greedy_fit {
	GREEDY_BEST_FIT,  /* smallest gap among the placed blocks that conflict */
	GREEDY_FIRST_FIT, /* lowest gap */
	GREEDY_LOWEST,	  /* lowest_first_place (planner_lowest.h), the order breaking ties */
};

/* Places items one by one in the given order (a permutation of 0..m-1), each in a
 * gap between already placed items that overlap it in time. O(m log m + P log P)
 * for P overlapping pairs. Returns 0, -ENOMEM, or -ETIMEDOUT if deadline_s (when
 * non-zero) passed first (offsets are then incomplete). May allocate. */
int greedy_place(const struct plan_item *it, size_t m, const uint32_t *order, enum greedy_fit fit,
		 double deadline_s, uint64_t *off, uint64_t *arena_bytes);

/* Fills order (m entries) for one of the fixed orders. Returns 0 or -ENOMEM. */
int greedy_make_order(const struct plan_item *it, size_t m, enum greedy_order kind,
		      uint32_t *order);
