/* Spare space, see spare.h. */
#include "spare.h"

#include <stdbool.h>
#include <stdint.h>

#include "arena.h"

/* Fine words one search reads: 64 words are 1,344 granules, 21 KiB of arena. */
#define SCAN_WORDS 64u
/* Blocks longer than this are left to libc: one search could not find room
 * for them among the words it reads. */
#define MAX_GRANULES (SCAN_WORDS / 2 * ARENA_WORD_GRANULES)
/* The most misses a thread leaves to libc after a failed search: small
 * enough that an arena with room elsewhere is searched again soon (perl on a
 * longer input: 97.9% of its calls served with 4096 here, 98.1% with 64), and
 * enough that one with no room costs little (python3-args, 68,000 misses:
 * 83 instructions a miss, 0.09% of its replay's, callgrind). */
#define BACKOFF_MAX 64u

/* This thread's next search starts at word cursor; after a failed one, its
 * next skip misses go to libc without a search. */
static __thread uint64_t cursor __attribute__((tls_model("initial-exec")));
static __thread uint32_t skip __attribute__((tls_model("initial-exec")));
static __thread uint32_t backoff __attribute__((tls_model("initial-exec")));

/* Where this thread's last searches found room (1 + first granule; 0: none),
 * tried before any search, even while searches are skipped. A loop whose
 * blocks outgrew its plan frees each soon after it took spare room, and its
 * next block then fits the same place: python3's json loop on 20 times the
 * turns of its recording, 93.1% of its calls served without them, 99.9% with
 * them. A place still held costs one bit read. */
#define RECENT_PLACES 8u
static __thread uint64_t recent_places[RECENT_PLACES] __attribute__((tls_model("initial-exec")));
static __thread uint32_t recent_next __attribute__((tls_model("initial-exec")));
/* Tries in a row that found none of them free; past RECENT_PATIENCE of them,
 * the thread skips its next recent_skip tries, twice as many each time, so
 * that places that stay held (blocks that outlive the loop) cost little:
 * churn-args at the benchmark's quick scale, 247,000 misses: 0.2% more
 * instructions with them than without, 5% more when every miss tried all of
 * them. */
#define RECENT_PATIENCE 4u
static __thread uint32_t recent_misses __attribute__((tls_model("initial-exec")));
static __thread uint32_t recent_skip __attribute__((tls_model("initial-exec")));

/* The granules of fine word w that are held or lie past the arena's end, as
 * occupied bits. A word held at the coarse level (the middle of a long block)
 * is all held. */
static uint64_t held_bits(uint64_t w)
{
	uint64_t held = atomic_load_explicit(&arena_fine[w], memory_order_relaxed) & ARENA_OCCUPIED;
	uint64_t past = arena_granules - w * ARENA_WORD_GRANULES;

	if (atomic_load_explicit(&arena_coarse[w / 64], memory_order_relaxed) >> (w % 64) & 1)
		return ARENA_OCCUPIED;
	if (past < ARENA_WORD_GRANULES)
		held |= ARENA_OCCUPIED & ~((UINT64_C(1) << past) - 1);
	return held;
}

/* Where the first run of count free granules starts in a word whose free
 * granules are the bits of free, or -1 if it has none. */
static int free_run_in(uint64_t free, uint64_t count)
{
	uint64_t runs = free, len = 1;

	/* Bit b of runs: granules b..b+len-1 are all free. */
	while (2 * len <= count) {
		runs &= runs >> len;
		len *= 2;
	}
	if (len < count)
		runs &= runs >> (count - len);
	return runs ? __builtin_ctzll(runs) : -1;
}

static void *claim_at(uint64_t granule, size_t size)
{
	return arena_claim(granule * PLAN_GRANULE_BYTES, size);
}

/* claim_at a place a search found, remembered if it is claimed. */
static void *claim_found(uint64_t granule, size_t size)
{
	void *p = claim_at(granule, size);

	if (p)
		recent_places[recent_next++ % RECENT_PLACES] = granule + 1;
	return p;
}

/* A block of count granules at one of the recent places, or NULL. */
static void *claim_recent(uint64_t count, size_t size)
{
	if (recent_skip) {
		recent_skip--;
		return NULL;
	}
	for (uint32_t i = 1; i <= RECENT_PLACES; i++) {
		const uint64_t g = recent_places[(recent_next - i) % RECENT_PLACES];
		void *p;

		if (g && g - 1 + count <= arena_granules &&
		    !arena_granule_held((g - 1) * PLAN_GRANULE_BYTES) &&
		    (p = claim_at(g - 1, size))) {
			recent_misses = 0;
			return p;
		}
	}
	if (++recent_misses > RECENT_PATIENCE) {
		const uint32_t doublings = recent_misses - RECENT_PATIENCE;
		recent_skip = doublings < 6 ? 1u << doublings : BACKOFF_MAX;
	}
	return NULL;
}

void *spare_claim(size_t size)
{
	const uint64_t count = plan_granules_of(size);
	const uint64_t words = arena_fine_words;

	if (!words || !count || count > MAX_GRANULES)
		return NULL;
	void *p = claim_recent(count, size);
	if (p)
		return p;
	if (skip) {
		skip--;
		return NULL;
	}
	uint64_t w = cursor < words ? cursor : 0;
	/* A run of free granules that reaches the end of the word before w. */
	uint64_t run = 0, run_first = 0;
	for (unsigned n = 0; n < SCAN_WORDS; n++, w++) {
		if (w == words) {
			w = 0;
			run = 0;
		}
		const uint64_t held = held_bits(w), first = w * ARENA_WORD_GRANULES;
		const uint64_t lead = held ? (uint64_t)__builtin_ctzll(held) : ARENA_WORD_GRANULES;
		if (run && run + lead >= count)
			p = claim_found(run_first, size);
		int b;
		if (!p && count <= ARENA_WORD_GRANULES &&
		    (b = free_run_in(~held & ARENA_OCCUPIED, count)) >= 0)
			p = claim_found(first + (uint64_t)b, size);
		if (p) {
			cursor = w;
			backoff = 0;
			return p;
		}
		if (!held) {
			run_first = run ? run_first : first;
			run += ARENA_WORD_GRANULES;
		} else {
			/* The free granules above the word's last held one. */
			run = ARENA_WORD_GRANULES - 1 - (63 - (uint64_t)__builtin_clzll(held));
			run_first = first + ARENA_WORD_GRANULES - run;
		}
	}
	cursor = w;
	backoff = backoff ? (2 * backoff < BACKOFF_MAX ? 2 * backoff : BACKOFF_MAX) : 1;
	skip = backoff;
	return NULL;
}
