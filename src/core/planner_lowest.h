/* Lowest offset first, without enumerating overlapping pairs. Internal to the
 * planner. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "planner_greedy.h"

/* Repeatedly places the unplaced item that can go lowest: on top of every placed
 * item it overlaps in time, aligned; ties go to the earlier item in order (a
 * permutation of 0..m-1). This is the first dive of the exact search. Each item's
 * lowest offset is kept in a k-d tree over (start, end), so that placing an item
 * raises all the unplaced items it overlaps at once: the cost does not grow with
 * the overlapping pairs, which a few thousand blocks that live to the end of a
 * recording make into hundreds of millions. Returns 0, -ENOMEM, -ETIMEDOUT if
 * deadline_s (when non-zero) passed first, or -EFAULT if the tree broke an
 * invariant (a bug; offsets are incomplete after either). May allocate. */
int lowest_first_place(const struct plan_item *it, size_t m, const uint32_t *order,
		       double deadline_s, uint64_t *off, uint64_t *arena_bytes);
