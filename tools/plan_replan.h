/* Re-planning every image of a plan file within one time budget: what `memplan
 * plan PLAN` does, and what `memplan record` does once the command has ended (the
 * processes only pack their plans linearly at exit, so as not to delay it). The
 * work is done on a snapshot of the file, without its lock; the results are then
 * applied to the images of the file as it is under the lock (plan_replan_apply),
 * so that a process that merged its image meanwhile loses nothing. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "plan_file.h"

struct replan_options {
	/* For all images together. 0: the planner's quick pass only, however long
	 * it takes. */
	double budget_s;
	/* Stop improving an image once it is within this fraction of its lower
	 * bound (planner.h); 0: use the whole budget. */
	double slack;
	uint64_t slack_bytes; /* and within this many bytes (planner.h) */
	unsigned threads; /* 0: one per CPU */
	/* Called before each image and now and then while one is planned; may be
	 * NULL. */
	void (*progress)(void *ctx, uint32_t image, uint32_t image_count, uint64_t arena_bytes,
			 uint64_t lower_bound_bytes, double elapsed_s);
	void *progress_ctx;
};

/* Figures over all images, for one summary line. Arenas and bounds are sums
 * over the images (each process has an arena of its own). */
struct replan_summary {
	uint32_t images, improved;
	uint64_t allocations; /* recorded: exact entries and those folded into pools */
	uint64_t arena_before_bytes, arena_bytes;
	uint64_t lower_bound_bytes; /* the recorded runs' (plan_image_record) */
	uint64_t blocks_peak_bytes; /* what the plans' blocks hold at once (plan_builder.h) */
	double elapsed_s;
};

struct replan_result;

struct plan_replan {
	struct replan_result *results;
	uint32_t count;
};

/* Re-plans every image of the validated plan buffer buf, within opt->budget_s as a
 * whole; each new layout is checked with the independent checker. An image keeps
 * its layout unless the new one is smaller. Fills *r (free it with
 * plan_replan_free, also on failure) and *sum. Returns 0, or a negative errno with
 * a one-line reason in why (an invalid layout from the planner is -EINVAL). May
 * allocate; may use threads. */
int plan_replan_run(struct plan_replan *r, const void *buf, const struct replan_options *opt,
		    struct replan_summary *sum, char *why, size_t why_len);

/* If r holds a smaller layout for image (the same process image, read from the
 * same file or from a later version of it), points image at it and returns true;
 * the tables stay r's. */
bool plan_replan_apply(const struct plan_replan *r, struct plan_image *image);

void plan_replan_free(struct plan_replan *r);
