/* The replay arena: one mapping of the plan's size, from which plan entries are
 * served at their offsets, and the run-time check that makes replay safe whatever
 * the plan says and whatever order the program runs in.
 *
 * Three bitmaps, one bit per 16-byte granule: occupied, block starts, block ends.
 * No lock: every update is an atomic operation on one 64-bit word. Soundness:
 *  - a granule's occupied bit is set only by a compare-and-swap that found it
 *    clear, so at most one claim holds a granule at a time; a claim that finds any
 *    of its bits set gives back the words it took and fails (a spurious failure of
 *    a racing claim is only a miss: the caller uses libc);
 *  - hence the ranges of the blocks handed out and not yet released are pairwise
 *    disjoint, each with its start bit at its first granule and its end bit at its
 *    last (both set before the block is handed out);
 *  - arena_release first clears the start bit, and only the caller that found it
 *    set goes on (a double free, even a racing one, does nothing); the first end
 *    bit at or after the start is then the block's own, since any other block's
 *    end inside it would break disjointness; it clears that end bit and, last, the
 *    occupied bits, so the granules become claimable only once nothing refers to
 *    the old block;
 *  - offsets and sizes were bounds-checked against the arena when the plan was
 *    validated, so no claim reaches outside the mapping.
 * Hence no two live blocks ever overlap, even with a hostile plan. The check costs
 * one bit per granule: cheaper than "every block this entry overlays was issued
 * and freed", which needs the overlay sets of a plan we cannot trust. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "plan_file.h"

extern uintptr_t arena_base;
extern uint64_t arena_bytes;

/* True if p lies inside the arena (in any mode, after fork too). */
static inline bool arena_owns(const void *p)
{
	return (uintptr_t)p - arena_base < arena_bytes;
}

/* Maps an arena of bytes, aligned to PLAN_MAX_ALIGN_BYTES. prefault: populate it
 * now. Returns 0 or a negative errno. Call once, with the guard set. */
int arena_map(uint64_t bytes, bool prefault);

/* Claims size_bytes (rounded up to granules) at offset_bytes (a granule multiple
 * inside the arena) if those granules are free. Returns the block or NULL (busy).
 * Thread-safe and lock-free; async-signal-safe; does not allocate. */
void *arena_claim(uint64_t offset_bytes, uint64_t size_bytes);

/* Releases the live block that starts at p. Returns false if p is not the start of
 * a live block (a double or wild free: ignored). Thread-safe. */
bool arena_release(const void *p);

/* The size of the live block that starts at p (its planned size, in whole
 * granules), or 0 if p is not the start of a live block. Thread-safe. */
size_t arena_block_bytes(const void *p);

