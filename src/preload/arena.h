/* The replay arena: one mapping of the plan's size, from which plan entries are
 * served at their offsets, and the run-time check that makes replay safe whatever
 * the plan says and whatever order the program runs in.
 *
 * The check, per 16-byte granule: an occupied, a start and an end bit, packed in
 * fine words of 21 granules; and one coarse bit per fine word. A block [f, l] in
 * one word is held by that word's occupied bits. A longer one is held by the
 * occupied bits of its first and last words and the coarse bits of the words
 * between, whose fine words are only read (untouched pages stay the shared zero
 * page: a big block costs no memory for its middle). No lock; every operation on
 * these words is a seq_cst atomic, or its plain equivalent while the process has
 * one thread (lone_atomic.h: program order is then the single order). Soundness:
 *  1. Occupied and coarse bits are set only by a compare-and-swap that found them
 *     clear, so each level has at most one holder per granule or word. After its
 *     CAS a fine claim loads the word's coarse bit, and a coarse claim loads the
 *     fine word; either gives back all it took and fails if it sees the other
 *     level held. So a fine and a coarse hold of one word are never both passed
 *     at once: in the single order of seq_cst operations, the claim with the
 *     later CAS loads after both CASes and, if the other still holds, sees it.
 *     (Both may fail: a miss, the caller uses libc.) Shortcut: a fine claim
 *     whose CAS found a start bit in the word skips its load; that start is a
 *     block that passed and still holds the word at the fine level, so no passed
 *     coarse hold overlaps it (by induction on the order of passing), and a
 *     coarse claim after our CAS sees us.
 *  2. A claim sets its end bit, then its start bit, each only once every check
 *     up to it passed (in the shortcut, in the taking CAS itself). A release
 *     clears the start bit first, and the end bit together with the occupied
 *     bits of its word. So a set start bit marks a block that passed and holds
 *     all its granules, a set end bit one that passed and holds that granule,
 *     and by 1 no other such block holds any of them.
 *  3. arena_release goes on only if its CAS cleared the start bit: a double or
 *     wild free, even a racing one, and a claim not yet published find it clear.
 *     The first end bit at or after the start is the block's own (by 2 any other
 *     would be a block overlapping it). The same CAS frees the block's part of
 *     its first word; the end, if not there, is then sought in the following
 *     words, which the block still holds. From [f, l] it knows which words it
 *     held at which level and clears them: the granules become claimable only
 *     once nothing refers to the old block. arena_block_bytes reads the same.
 *  4. arena_claim refuses offsets that are not granule multiples and ranges past
 *     the arena's last granule, so no claim reaches outside the mapping.
 *  5. With one thread the read-modify-writes are a plain load and store
 *     (lone_atomic.h). A signal handler that frees an arena block between the
 *     load and the store of an operation it interrupted has its update undone
 *     when the store lands; memplan never claims inside its own code (the shims
 *     send a nested malloc to libc, and a nested realloc claims nothing), so
 *     what is undone is (part of) a release: granules that look occupied, a
 *     miss later. The block's start bit may outlive its end; only freeing that
 *     pointer again, a double free inside a signal handler, could then act on
 *     it. Allocating in a signal handler is undefined in POSIX and corrupts
 *     glibc's own heap in the same case.
 * Hence no two live blocks ever overlap, even with a hostile plan (with one
 * thread, short of the double free of 5). This is
 * cheaper than "every block this entry overlays was issued and freed", which
 * needs the overlay sets of a plan we cannot trust. */
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
 * Thread-safe and lock-free; does not allocate. With one thread it must not
 * interrupt another arena operation of this thread (see 5 above). */
void *arena_claim(uint64_t offset_bytes, uint64_t size_bytes);

/* Releases the live block that starts at p. Returns false if p is not the start of
 * a live block (a double or wild free: ignored). Thread-safe. */
bool arena_release(const void *p);

/* The size of the live block that starts at p (its planned size, in whole
 * granules), or 0 if p is not the start of a live block. Thread-safe. */
size_t arena_block_bytes(const void *p);
