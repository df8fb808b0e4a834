/* The replay arena: one mapping of the plan's size, from which plan entries are
 * served at their offsets, and the run-time check that makes replay safe whatever
 * the plan says and whatever order the program runs in.
 *
 * Occupancy is kept as one bit per 16-byte granule. Soundness, by induction over
 * claims and releases, all made under one mutex:
 *  - invariant: the granule sets of the live arena blocks are pairwise disjoint,
 *    and each is exactly the set of bits it set;
 *  - arena_claim sets the bits of [offset, offset + size) only if all of them are
 *    clear, so a new block shares no granule with a live one;
 *  - arena_release finds the block by its start (unique among live blocks, by the
 *    invariant) and clears exactly the bits its claim set, computed from the same
 *    immutable plan entry;
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

/* Maps an arena of bytes, aligned to PLAN_MAX_ALIGN_BYTES, for the entries of a
 * validated plan image. prefault: populate it now. Returns 0 or a negative errno.
 * Call once, with the guard set. */
int arena_map(uint64_t bytes, const struct plan_entry *entries, bool prefault);

/* Claims entries[entry] at its offset if its granules are free. Returns the block
 * or NULL (slot busy, or out of memory for bookkeeping). Thread-safe. */
void *arena_claim(uint64_t entry);

/* Releases the live block that starts at p. Returns false if p is not the start of
 * a live block (a double or wild free: ignored). Thread-safe. */
bool arena_release(const void *p);

/* The plan entry of the live block that starts at p, if any. Thread-safe. */
bool arena_lookup(const void *p, uint64_t *entry);

void arena_before_fork(void);
void arena_after_fork_parent(void);
void arena_after_fork_child(void);
