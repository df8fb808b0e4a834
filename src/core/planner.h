/* The planner: gives every block an offset so that no two blocks alive at the same
 * time overlap in the arena, honouring each block's alignment, and makes the arena
 * (the highest end) as small as it can within a time budget.
 *
 * Pure: no global state, no I/O except the optional progress callback. It may use
 * more than one thread internally. Results are deterministic for a given input,
 * options and time limit (the time limit only decides how far improvement gets). */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "block.h"

struct planner_options {
	/* Wall-clock budget in seconds. 0 means: the quick pass only (planner.c),
	 * however long its heuristics over overlapping pairs take; with a budget,
	 * they run only if they are likely to fit it, and improvement uses the rest.
	 * The O(n log n) first heuristic always runs. */
	double time_limit_s;
	/* If non-zero, stop as soon as a solution at or below this size is found
	 * (a decision problem, as in MiniMalloc's --capacity). */
	uint64_t capacity_bytes;
	/* If positive, stop improving as soon as the arena is at most this fraction
	 * above the lower bound (0.01: within 1%): what is left is not worth the
	 * wait. */
	double slack;
	/* And as soon as it is at most this many bytes above it: a few pages are
	 * not worth seconds of a recording (a program of a thousand blocks took
	 * the record's whole 5 s to stay 5.6 KiB above its bound). 0: none. */
	uint64_t slack_bytes;
	/* Worker threads for improvement; 0 means one per online CPU. */
	unsigned threads;
	/* Called now and then on long runs; may be NULL. */
	void (*progress)(void *ctx, uint64_t best_bytes, uint64_t lower_bound_bytes,
			 double elapsed_s);
	void *progress_ctx;
};

/* The worker threads opt asks for: opt->threads, or one per online CPU. */
unsigned planner_threads(const struct planner_options *opt);

struct planner_result {
	uint64_t arena_bytes;	    /* highest offset + size over all blocks */
	uint64_t lower_bound_bytes; /* the most bytes live at one moment */
	double elapsed_s;
	int proven_optimal; /* 1 if arena_bytes == lower_bound_bytes */
};

/* Fills in offset_bytes of blocks[0..n). The array is not reordered.
 * Returns 0 on success, -EINVAL if an alignment is not a power of two or a
 * lifetime is empty or reversed (t_end <= t_start, for a non-zero size), -ENOMEM.
 * Thread-safe for distinct inputs. May allocate. */
int planner_solve(struct block *blocks, size_t n, const struct planner_options *opt,
		  struct planner_result *result);

/* The starts and ends of blocks[0..n) that have a size and a lifetime, sorted by
 * time, ends first at equal times (lifetimes are half-open): keys[k] is the
 * time << 1, | 1 for a start; vals[k] the block's index. *keys_out and
 * *vals_out are malloc'ed (the caller frees them). Returns 0, -ENOMEM, or
 * -EINVAL if a time does not leave room for the kind bit (2^63 or more). */
int planner_events(const struct block *blocks, size_t n, uint64_t **keys_out,
		   uint32_t **vals_out, size_t *count);

/* The most bytes alive at one moment (frees before allocations at equal times).
 * No valid plan can be smaller. O(n log n). Returns 0 or -ENOMEM. May allocate. */
int planner_lower_bound(const struct block *blocks, size_t n, uint64_t *lower_bound_bytes);
