/* The recording-time planner: replays the blocks' events in time order through a
 * two-level segregated-fit (TLSF-style) offset allocator with coalescing. Linear in
 * the number of blocks when times are dense (as on a recording's logical clock),
 * with O(1) work per event, so even a recording of millions of allocations is
 * planned in a fraction of a second at exit. It packs about as well as a good
 * malloc would; the planner proper (planner.h) does better given time, and
 * `memplan plan` re-plans a recording with it. Pure: no global state. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "block.h"

/* Fills in offset_bytes of blocks[0..n) (not reordered; alignment honoured;
 * half-open lifetimes, frees before allocations at equal times; zero-size blocks
 * get offset 0), and returns the arena size and the lower bound (the most bytes
 * live at one moment). Returns 0, -EINVAL (bad alignment or lifetime), -ENOMEM.
 * May allocate. Thread-safe for distinct inputs. */
int event_packer_pack(struct block *blocks, size_t n, uint64_t *arena_bytes,
		      uint64_t *lower_bound_bytes);
