/* An independent validator for plans, kept deliberately simple so that it can be
 * trusted more than the planner it checks. It shares no code with the planner. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "block.h"

/* Checks that every block is aligned, lies inside [0, arena_bytes), and that no
 * two blocks overlap both in time and in space (zero-size blocks overlap nothing).
 * Returns 0 if valid, -EINVAL if not (with a one-line reason in why, naming the
 * block indexes), -ENOMEM. O(n log n + k) for k reported pairs. May allocate. */
int checker_validate(const struct block *blocks, size_t n, uint64_t arena_bytes, char *why,
		     size_t why_len);
