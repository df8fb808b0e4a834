/* The linear packer for a finished trace: replays the blocks' events in time order
 * through the online offset allocator (offset_allocator.h), the same packing the
 * recorder does as the program runs. Linear in the number of blocks when times are
 * dense (as on a recording's logical clock), with O(1) work per event. It packs
 * about as well as a good malloc would and gives the lower bound; the planner
 * proper (planner.h) starts from it and does better given time. Pure: no global
 * state. */
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
