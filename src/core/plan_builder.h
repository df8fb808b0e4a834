/* Re-planning a planned image: its entries packed again by the event packer and the
 * planner proper, the smaller arena winning. `memplan plan PLAN` and `memplan
 * record` (tools/plan_replan.h) use it, and so does the recorder at exit for
 * traces small enough (recording.h). Pure: no global state. */
#pragma once

#include <stdint.h>

#include "plan_file.h"
#include "planner.h"

/* The planner's quick pass costs one to two microseconds per block (event-order
 * best fit, then lowest offset first, which stops at the deadline). At exit of a
 * recording, within a budget of S seconds, it is worth running only on traces of
 * up to S times this many blocks; bigger ones keep the plan made while recording
 * until `memplan record` re-plans them once the command has ended (or `memplan
 * plan` does). */
#define PLANNER_BLOCKS_PER_SECOND 500000.0

/* At exit of a recording, the planner runs only where the arena is at least this
 * much (and 1%) above the lower bound: below, there is little for it to save. */
#define PLANNER_MIN_GAIN_BYTES (UINT64_C(64) << 10)

/* Re-plans image's entries and pools: on success *entries_out and *chunks_out
 * are new malloc'ed copies with new offsets that image now points to, and
 * arena_bytes is set (lower_bound_bytes, a fact of the recorded run, stays). A
 * pool's chunk is packed as a block of all its slots, alive from its start on.
 * opt may
 * be NULL: the event packer only. An image with PLAN_IMAGE_THREAD_REGIONS is
 * re-planned a region at a time: the call sites whose blocks shared bytes in
 * its plan, at any time, transitively, form a region, which therefore lies
 * inside one thread's; each region is packed on its own, after the previous
 * one, so no two threads come to share bytes. A layout whose arena is already
 * within opt's slack of the least its blocks allow (their peak; with regions,
 * the sum of the regions' peaks) keeps its offsets: the planner would stop
 * there, after its quick pass (seconds on a few hundred thousand blocks).
 * Returns 0, -EINVAL, -ENOMEM. May allocate. */
int plan_builder_replan(struct plan_image *image, const struct planner_options *opt,
			struct plan_entry **entries_out, struct plan_chunk **chunks_out);

/* Checks image's layout with the independent checker (checker.h): its entries
 * (decoded, in image->entries) and its pools' chunks, as the blocks they are
 * planned as, must not overlap in time and space and must fit in its arena.
 * Sets *blocks_peak_bytes to the most bytes those blocks hold at once: no
 * layout of them is smaller, while the record's lower bound is the recorded
 * run's, which pools (alive from their start on) can exceed; it is set whenever
 * the result is not -ENOMEM. Returns 0, -EINVAL with a one-line reason in why,
 * or -ENOMEM. May allocate. */
int plan_builder_check(const struct plan_image *image, uint64_t *blocks_peak_bytes, char *why,
		       size_t why_len);
