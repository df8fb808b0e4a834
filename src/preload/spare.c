/* Spare space, see spare.h. */
#include "spare.h"

#include <stdatomic.h>
#include <sys/mman.h>

#include "arena.h"

/* Fine words one search reads: 64 words are 1,344 granules, 21 KiB of arena. */
#define SCAN_WORDS 64u
/* Blocks longer than this are left to libc: one search could not find room
 * for them among the words it reads. */
#define MAX_GRANULES (SCAN_WORDS / 2 * ARENA_WORD_GRANULES)
/* The most misses a thread leaves to libc after a failed search: small
 * enough that an arena with room elsewhere is searched again soon (perl on a
 * longer input: 97.9% of its calls served with 4096 here, 98.1% with 64; the
 * churn replayed on 20 times its recorded length: 98.56% with 64, 98.67%
 * with 8, its libc heap 12.6 MB and 12.2 MB at their peaks), and enough that
 * one with no room costs little (python3-args: 0.14% more instructions with 8
 * than with 64, callgrind; the churn's wall time the same). */
#define BACKOFF_MAX 8u
/* Once the searches that failed in a row have swept the whole arena (each
 * goes on where the last one stopped), the thread takes it for full and
 * leaves up to BACKOFF_FULL misses to libc between searches: a run that
 * outgrew its arena for good (xmllint on 400 times its recorded input, 2.2
 * million misses) spent a fifth of its time searching it. */
#define BACKOFF_FULL 512u

/* This thread's next search starts at word cursor; after a failed one, its
 * next skip misses go to libc without a search. Counted apart for blocks
 * that keep their places ([1]) and others ([0]): those find less room, and
 * their failures must not keep a loop's blocks from the room they may take. */
static __thread uint64_t cursor __attribute__((tls_model("initial-exec")));
static __thread uint32_t skip[2] __attribute__((tls_model("initial-exec")));
static __thread uint32_t backoff[2] __attribute__((tls_model("initial-exec")));
static __thread uint32_t fails[2] __attribute__((tls_model("initial-exec")));

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

/* The kept words, a bit each (spare_keep), mapped at the first word kept
 * (most short processes read no tail): NULL, none is kept; and how many
 * words the map covers. The map of an arena up to 168 KiB (a small
 * program's) is static data, not a page of its own. */
static _Atomic(_Atomic uint64_t *) kept;
static uint64_t kept_words;
static size_t kept_bytes;
static _Atomic uint64_t kept_small[8];

void spare_keep_init(uint64_t arena_size)
{
	const uint64_t granules = arena_size / PLAN_GRANULE_BYTES + 1;

	spare_keep_drop();
	kept_words = granules / ARENA_WORD_GRANULES + 1;
	kept_bytes = (size_t)((kept_words + 63) / 64 * sizeof(uint64_t));
}

/* The map of kept words, made if need be; NULL if it cannot be. */
static _Atomic uint64_t *kept_map(void)
{
	_Atomic uint64_t *map = atomic_load_explicit(&kept, memory_order_acquire), *expected = NULL;

	if (map || !kept_bytes)
		return map;
	if (kept_bytes <= sizeof(kept_small)) {
		atomic_compare_exchange_strong(&kept, &expected, kept_small);
		return kept_small;
	}
	/* Untouched pages of it cost nothing: only the words of places are set. */
	map = mmap(NULL, kept_bytes, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (map == MAP_FAILED)
		return NULL;
	if (!atomic_compare_exchange_strong(&kept, &expected, map)) {
		munmap((void *)map, kept_bytes); /* another thread's came first */
		return expected;
	}
	return map;
}

void spare_keep(uint64_t offset_bytes, uint64_t size_bytes)
{
	const uint64_t word_bytes = (uint64_t)PLAN_GRANULE_BYTES * ARENA_WORD_GRANULES;
	_Atomic uint64_t *map;

	if (!size_bytes || offset_bytes / word_bytes >= kept_words || !(map = kept_map()))
		return;
	const uint64_t w0 = offset_bytes / word_bytes;
	/* The word of the last byte; a range past the arena's end stops there. */
	uint64_t last = size_bytes - 1 > UINT64_MAX - offset_bytes
			    ? kept_words - 1
			    : (offset_bytes + size_bytes - 1) / word_bytes;
	if (last >= kept_words)
		last = kept_words - 1;
	/* A map word at a time, for a place of many words. */
	for (uint64_t w = w0; w <= last; w = (w / 64 + 1) * 64) {
		const uint64_t end = last / 64 == w / 64 ? last % 64 : 63;
		const uint64_t bits = (end == 63 ? ~UINT64_C(0) : (UINT64_C(1) << (end + 1)) - 1) &
				      ~((UINT64_C(1) << (w % 64)) - 1);
		atomic_fetch_or_explicit(&map[w / 64], bits, memory_order_relaxed);
	}
}

void spare_keep_drop(void)
{
	_Atomic uint64_t *map = atomic_exchange(&kept, NULL);

	if (map == kept_small)
		for (unsigned i = 0; i < sizeof(kept_small) / sizeof(kept_small[0]); i++)
			atomic_store_explicit(&kept_small[i], 0, memory_order_relaxed);
	else if (map)
		munmap((void *)map, kept_bytes);
	kept_words = 0;
	kept_bytes = 0;
}

static bool word_kept(uint64_t w)
{
	_Atomic uint64_t *map = atomic_load_explicit(&kept, memory_order_acquire);

	return map && w < kept_words &&
	       atomic_load_explicit(&map[w / 64], memory_order_relaxed) >> (w % 64) & 1;
}

/* The granules of fine word w that are held or lie past the arena's end, as
 * occupied bits. A word held at the coarse level (the middle of a long block)
 * is all held, and for a block that keeps its place, so is a kept word. */
static uint64_t held_bits(uint64_t w, bool keeps)
{
	if (keeps && word_kept(w))
		return ARENA_OCCUPIED;
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

/* Whether a block that keeps its place may take count granules at granule g:
 * none of their words is kept (a place a search found for another block may
 * have some). At most MAX_GRANULES: a few words. */
static bool may_keep_at(uint64_t g, uint64_t count)
{
	for (uint64_t w = g / ARENA_WORD_GRANULES; w <= (g + count - 1) / ARENA_WORD_GRANULES; w++)
		if (word_kept(w))
			return false;
	return true;
}

/* A block of count granules at one of the recent places, or NULL. */
static void *claim_recent(uint64_t count, size_t size, bool keeps)
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
		    (!keeps || may_keep_at(g - 1, count)) && (p = claim_at(g - 1, size))) {
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

void *spare_claim(size_t size, bool keeps)
{
	const uint64_t count = plan_granules_of(size);
	const uint64_t words = arena_fine_words;

	if (!words || !count || count > MAX_GRANULES)
		return NULL;
	void *p = claim_recent(count, size, keeps);
	if (p)
		return p;
	if (skip[keeps]) {
		skip[keeps]--;
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
		const uint64_t held = held_bits(w, keeps), first = w * ARENA_WORD_GRANULES;
		const uint64_t lead = held ? (uint64_t)__builtin_ctzll(held) : ARENA_WORD_GRANULES;
		if (run && run + lead >= count)
			p = claim_found(run_first, size);
		int b;
		if (!p && count <= ARENA_WORD_GRANULES &&
		    (b = free_run_in(~held & ARENA_OCCUPIED, count)) >= 0)
			p = claim_found(first + (uint64_t)b, size);
		if (p) {
			cursor = w;
			backoff[keeps] = fails[keeps] = 0;
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
	const uint32_t b = backoff[keeps], most = (uint64_t)++fails[keeps] * SCAN_WORDS >= words
						      ? BACKOFF_FULL
						      : BACKOFF_MAX;
	backoff[keeps] = b ? (2 * b < most ? 2 * b : most) : 1;
	skip[keeps] = backoff[keeps];
	return NULL;
}
