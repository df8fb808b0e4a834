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
 * these words is a seq_cst atomic (but for a coarse claim's reads of the fine
 * words, relaxed after a seq_cst fence: point 1), or its plain equivalent while
 * the process has one thread (lone_atomic.h: program order is then the single
 * order). Soundness:
 *  1. Occupied and coarse bits are set only by a compare-and-swap that found them
 *     clear, so each level has at most one holder per granule or word. After its
 *     CAS a fine claim loads the word's coarse bit, and a coarse claim, after a
 *     seq_cst fence, loads the fine words (relaxed, many at a time); either gives
 *     back all it took and fails if it sees the other level held. So a fine and
 *     a coarse hold of one word are never both passed at once. In the single
 *     order S of seq_cst operations, if the fine CAS precedes the coarse
 *     claim's fence, the coarse claim's load observes that CAS or a later
 *     value of the word (C11 7.17.3: a load after a seq_cst fence sees the
 *     last seq_cst store before the fence in S, or later); if the fence comes
 *     first, the coarse CAS (before the fence) precedes the fine claim's
 *     seq_cst load in S, which then sees it. Either way the later one sees the
 *     other if it still holds. (Both may fail: a miss, the caller uses libc.)
 *     With one thread there is no fence: program order is the order.
 *     Shortcut: a fine claim whose CAS found a start bit in the word skips its
 *     load; that start is a block that passed and still holds the word at the
 *     fine level, so no passed coarse hold overlaps it (by induction on the
 *     order of passing), and a coarse claim after our CAS sees us.
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
 *     words, which the block still holds. (With one thread and no arena
 *     operation interrupted, the coarse bits set right after the first word are
 *     exactly the block's middle words, since no failing claim can hold one for
 *     a moment: the search starts after them.) From [f, l] it knows which words it
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

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lone_atomic.h"
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
static inline void *arena_claim(uint64_t offset_bytes, uint64_t size_bytes);

/* Releases the live block that starts at p. Returns false if p is not the start of
 * a live block (a double or wild free: ignored). Thread-safe. */
static inline bool arena_release(const void *p);

/* A released block of at least this many bytes gives the pages of all but its
 * first and last few granules back to the kernel while it still holds them
 * (arena_release_rest), as glibc unmaps a freed block it mapped on its own
 * (its blocks of 32 MiB and more always are): sort --parallel on a bigger
 * input than recorded kept its freed 50 MB buffer resident in the arena
 * beside the bigger ones libc then gave it, 1.9 times a plain run's peak.
 * Reused, the pages come back zeroed, a fault each, as glibc's do. */
#define ARENA_GIVE_BACK_BYTES (UINT64_C(32) << 20)

/* From now on, released blocks keep their pages: a process about to sandbox
 * itself makes no system call to free a block. */
void arena_keep_pages(void);

/* What a free or realloc of an arena address that is no live block's start
 * means: a double free, or a pointer into a block. glibc aborts on such a
 * pointer of its own; so does this, with a line naming call (free, realloc)
 * and p. */
void arena_bad_pointer(const char *call, const void *p) __attribute__((noreturn, cold));

/* The size of the live block that starts at p (its planned size, in whole
 * granules), or 0 if p is not the start of a live block. Thread-safe. */
size_t arena_block_bytes(const void *p);

/* Retired arenas. A forked child that replays a plan of its own maps an arena of
 * its own; the one it inherited, still full of its parent's blocks, is retired:
 * it serves nothing more, and its blocks stay where they are. The child may still
 * free them (a no-op: the memory is its parent's copy and goes with the mapping),
 * resize them (moved out) and ask their size. Its check words are never written
 * again, so reading them needs no care. */
#define ARENA_RETIRED_MAX 4u
extern unsigned arena_retired_count;

/* Retires the arena: arena_owns is false from now on, and arena_map may map a
 * new one. Returns false, changing nothing, if ARENA_RETIRED_MAX are retired
 * already. Call with one thread. */
bool arena_retire(void);

/* True if p lies in a retired arena. */
bool arena_retired_find(const void *p);
static inline bool arena_retired_owns(const void *p)
{
	return arena_retired_count && arena_retired_find(p);
}

/* arena_block_bytes for a block of a retired arena. */
size_t arena_retired_block_bytes(const void *p);

/* The rest of this header is the check itself, inline because a block of one
 * fine word, the common case, is claimed and released in a few instructions
 * (arena.c holds the longer paths).
 *
 * A fine word covers ARENA_WORD_GRANULES granules: bit b (b < 21) is granule b's
 * occupied bit, bit 21 + b its start bit, bit 42 + b its end bit. Every
 * operation on fine and coarse words is seq_cst (a coarse claim's reads of fine
 * words are ordered by a seq_cst fence instead, point 1): the handshake between
 * the two levels needs a single total order of them. The read-modify-writes go
 * through lone_atomic.h, which drops the bus lock while there is one thread. */
#define ARENA_WORD_GRANULES 21
#define ARENA_OCCUPIED	    ((UINT64_C(1) << ARENA_WORD_GRANULES) - 1)
#define ARENA_STARTS	    (ARENA_OCCUPIED << ARENA_WORD_GRANULES)
#define ARENA_ENDS	    (ARENA_OCCUPIED << (2 * ARENA_WORD_GRANULES))
#define ARENA_START(b)	    (UINT64_C(1) << (ARENA_WORD_GRANULES + (b)))
#define ARENA_END(b)	    (UINT64_C(1) << (2 * ARENA_WORD_GRANULES + (b)))

/* fine: one word per ARENA_WORD_GRANULES granules; coarse: one bit per fine word. */
extern _Atomic uint64_t *arena_fine, *arena_coarse;
extern uint64_t arena_granules, arena_fine_words;

/* Claims granules first..last, which span fine words (arena.c). */
void *arena_claim_span(uint64_t offset_bytes, uint64_t first, uint64_t last);
/* Releases the words after w0 of a block whose first word w0 is released. */
void arena_release_rest(uint64_t w0);

/* Occupied bits of granules lo..hi (inclusive) of a word. */
static inline uint64_t arena_occupied_run(uint64_t lo, uint64_t hi)
{
	return (UINT64_C(2) << hi) - (UINT64_C(1) << lo);
}

static inline bool arena_coarse_test(uint64_t w)
{
	return atomic_load(&arena_coarse[w / 64]) >> (w % 64) & 1;
}

/* Sets the occupied bits mask of fine word w if they are all clear, then checks
 * that w is not held at the coarse level, then sets the bits marks (start or end
 * bits of the caller's block, which must need no other check). If the word
 * already held a start (a block that passed its check and is not yet released),
 * no coarse claim can hold w: the check is skipped and marks set in the same
 * step. On failure gives back what it took. */
static inline bool arena_fine_take(uint64_t w, uint64_t mask, uint64_t marks)
{
	uint64_t old, add;

	/* One thread: the same checks, then one store (lone_atomic.h). */
	if (lone_thread()) {
		old = atomic_load_explicit(&arena_fine[w], memory_order_relaxed);
		if (old & mask || (!(old & ARENA_STARTS) && arena_coarse_test(w)))
			return false;
		atomic_store_explicit(&arena_fine[w], old | mask | marks, memory_order_relaxed);
		return true;
	}
	old = atomic_load(&arena_fine[w]);
	do {
		if (old & mask)
			return false;
		add = old & ARENA_STARTS ? mask | marks : mask;
	} while (!lone_cas(&arena_fine[w], &old, old | add));
	if (add == mask) {
		if (arena_coarse_test(w)) {
			lone_fetch_and(&arena_fine[w], ~mask);
			return false;
		}
		if (marks)
			lone_fetch_or(&arena_fine[w], marks);
	}
	return true;
}

/* With one thread, claims granules b0.. of fine word w and ..b1 of word w + 1:
 * what arena_claim_span does for such a block, in one load and one store per
 * word (lone_atomic.h). always_inline: with link-time optimisation gcc
 * otherwise makes it a call. */
static inline __attribute__((always_inline)) bool arena_take_pair_lone(uint64_t w, uint64_t b0,
								       uint64_t b1)
{
	uint64_t head = arena_occupied_run(b0, ARENA_WORD_GRANULES - 1);
	uint64_t tail = arena_occupied_run(0, b1);
	uint64_t old0 = atomic_load_explicit(&arena_fine[w], memory_order_relaxed);
	uint64_t old1 = atomic_load_explicit(&arena_fine[w + 1], memory_order_relaxed);

	if (old0 & head || old1 & tail || (!(old0 & ARENA_STARTS) && arena_coarse_test(w)) ||
	    (!(old1 & ARENA_STARTS) && arena_coarse_test(w + 1)))
		return false;
	atomic_store_explicit(&arena_fine[w], old0 | head | ARENA_START(b0), memory_order_relaxed);
	atomic_store_explicit(&arena_fine[w + 1], old1 | tail | ARENA_END(b1),
			      memory_order_relaxed);
	return true;
}

/* What arena_claim_near found. */
enum arena_near { ARENA_NEAR_BUSY, ARENA_NEAR_CLAIMED, ARENA_NEAR_FAR };

/* arena_claim for the blocks it claims without a call: those in one fine word,
 * and with one thread those in two. ARENA_NEAR_FAR: the block is valid but
 * longer, for arena_claim_span; nothing is done. always_inline: gcc otherwise
 * keeps it a call in replay_express, 2% more instructions on the churn replay
 * (callgrind). */
static inline __attribute__((always_inline)) enum arena_near arena_claim_near(uint64_t offset_bytes,
									      uint64_t size_bytes)
{
	uint64_t first = offset_bytes / PLAN_GRANULE_BYTES;
	uint64_t count = plan_granules_of(size_bytes);
	uint64_t w0, b0;

	if (offset_bytes % PLAN_GRANULE_BYTES || !count || first >= arena_granules ||
	    count > arena_granules - first)
		return ARENA_NEAR_BUSY;
	w0 = first / ARENA_WORD_GRANULES;
	b0 = first % ARENA_WORD_GRANULES;
	if (b0 + count <= ARENA_WORD_GRANULES)
		return arena_fine_take(w0, arena_occupied_run(b0, b0 + count - 1),
				       ARENA_START(b0) | ARENA_END(b0 + count - 1))
			   ? ARENA_NEAR_CLAIMED
			   : ARENA_NEAR_BUSY;
	if (lone_thread() && b0 + count <= 2 * ARENA_WORD_GRANULES)
		return arena_take_pair_lone(w0, b0, b0 + count - 1 - ARENA_WORD_GRANULES)
			   ? ARENA_NEAR_CLAIMED
			   : ARENA_NEAR_BUSY;
	return ARENA_NEAR_FAR;
}

static inline __attribute__((always_inline)) void *arena_claim(uint64_t offset_bytes,
							       uint64_t size_bytes)
{
	switch (arena_claim_near(offset_bytes, size_bytes)) {
	case ARENA_NEAR_CLAIMED:
		return (void *)(arena_base + offset_bytes);
	case ARENA_NEAR_FAR: {
		uint64_t first = offset_bytes / PLAN_GRANULE_BYTES;
		return arena_claim_span(offset_bytes, first,
					first + plan_granules_of(size_bytes) - 1);
	}
	default:
		return NULL;
	}
}

/* Whether the granule at offset_bytes (inside the arena or not) is held, as
 * far as its fine word tells: a test of one bit, for a caller about to try
 * arena_claim at a place that is likely taken. Only a hint: a held granule
 * makes the claim fail, but one seen free may be taken by the time of the
 * claim, or held at the coarse level, which the claim itself settles. */
static inline bool arena_granule_held(uint64_t offset_bytes)
{
	uint64_t g = offset_bytes / PLAN_GRANULE_BYTES;

	return g >= arena_granules ||
	       atomic_load_explicit(&arena_fine[g / ARENA_WORD_GRANULES], memory_order_relaxed) >>
		       (g % ARENA_WORD_GRANULES) &
		   1;
}

/* The first end bit at or after bit b of a fine word's value, or -1. */
static inline int arena_end_in(uint64_t word, uint64_t b)
{
	uint64_t ends = word & ARENA_ENDS & (~UINT64_C(0) << (2 * ARENA_WORD_GRANULES + b));

	return ends ? __builtin_ctzll(ends) - 2 * ARENA_WORD_GRANULES : -1;
}

static inline bool arena_release(const void *p)
{
	uint64_t offset = (uintptr_t)p - arena_base, g = offset / PLAN_GRANULE_BYTES;
	uint64_t w0 = g / ARENA_WORD_GRANULES, b0 = g % ARENA_WORD_GRANULES, old;
	int b1;

	if (offset % PLAN_GRANULE_BYTES || g >= arena_granules)
		return false;
	/* Whoever clears the start bit owns the release: a racing double free finds
	 * it clear and does nothing. The block's part of this word goes in the same
	 * step, with its end bit if that is here too. With one thread, one load and
	 * one store (lone_atomic.h). */
	const bool lone = lone_thread();
	old = atomic_load_explicit(&arena_fine[w0],
				   lone ? memory_order_relaxed : memory_order_seq_cst);
	for (;;) {
		if (!(old & ARENA_START(b0)))
			return false;
		b1 = arena_end_in(old, b0);
		uint64_t left =
		    old & ~(ARENA_START(b0) |
			    (b1 >= 0 ? ARENA_END(b1) | arena_occupied_run(b0, (uint64_t)b1)
				     : arena_occupied_run(b0, ARENA_WORD_GRANULES - 1)));
		if (lone) {
			atomic_store_explicit(&arena_fine[w0], left, memory_order_relaxed);
			break;
		}
		if (atomic_compare_exchange_weak(&arena_fine[w0], &old, left))
			break;
	}
	if (b1 >= 0)
		return true;
	/* With one thread, a block that ends in the next word is done here:
	 * arena_release_rest finds the same end, but through a call and its
	 * general search, 3% more instructions on the churn replay (callgrind). */
	if (lone && w0 + 1 < arena_fine_words) {
		uint64_t next = atomic_load_explicit(&arena_fine[w0 + 1], memory_order_relaxed);
		int end = arena_end_in(next, 0);
		if (end >= 0) {
			atomic_store_explicit(
			    &arena_fine[w0 + 1],
			    next & ~(ARENA_END(end) | arena_occupied_run(0, (uint64_t)end)),
			    memory_order_relaxed);
			return true;
		}
	}
	arena_release_rest(w0);
	return true;
}
