/* The replay arena and its occupancy check, see arena.h for the soundness argument. */
#define _GNU_SOURCE
#include "arena.h"

#include <errno.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lone_atomic.h"

uintptr_t arena_base;
uint64_t arena_bytes;

/* A fine word covers WORD_GRANULES granules: bit b (b < 21) is granule b's
 * occupied bit, bit 21 + b its start bit, bit 42 + b its end bit. */
#define WORD_GRANULES 21
#define OCCUPIED      ((UINT64_C(1) << WORD_GRANULES) - 1)
#define STARTS	      (OCCUPIED << WORD_GRANULES)
#define ENDS	      (OCCUPIED << (2 * WORD_GRANULES))
#define START(b)      (UINT64_C(1) << (WORD_GRANULES + (b)))
#define END(b)	      (UINT64_C(1) << (2 * WORD_GRANULES + (b)))
#define NO_END	      UINT64_MAX

/* fine: one word per WORD_GRANULES granules; coarse: one bit per fine word. */
static _Atomic uint64_t *fine, *coarse;
static uint64_t granules, fine_words;

/* Occupied bits of granules lo..hi (inclusive) of a word. */
static inline uint64_t occupied_run(uint64_t lo, uint64_t hi)
{
	return (UINT64_C(2) << hi) - (UINT64_C(1) << lo);
}

/* The bits [bit, bit + count) of a coarse word, count <= 64 - bit. */
static inline uint64_t coarse_run(uint64_t bit, uint64_t count)
{
	return count >= 64 ? ~UINT64_C(0) : ((UINT64_C(1) << count) - 1) << bit;
}

static uint64_t round_up(uint64_t n, uint64_t to)
{
	return (n + to - 1) / to * to;
}

int arena_map(uint64_t bytes, bool prefault)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t count = (bytes + PLAN_GRANULE_BYTES - 1) / PLAN_GRANULE_BYTES;
	uint64_t words = (count + WORD_GRANULES - 1) / WORD_GRANULES;
	uint64_t coarse_bytes = round_up((words + 63) / 64 * 8, 64);
	uint64_t meta_bytes = coarse_bytes + words * 8;
	uint64_t map_bytes = round_up(bytes, page) + PLAN_MAX_ALIGN_BYTES;
	char *raw, *base, *end;
	void *meta;

	if (!bytes)
		return 0;
	/* The check's words first, so the arena's trimmed tail stays a hole. Reads
	 * of untouched words map the zero page: only words written cost memory. */
	meta = mmap(NULL, meta_bytes, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (meta == MAP_FAILED)
		return -errno;
	madvise(meta, meta_bytes, MADV_NOHUGEPAGE);
	raw = mmap(NULL, map_bytes, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (raw == MAP_FAILED) {
		int err = errno;
		munmap(meta, meta_bytes);
		return -err;
	}
	/* Align the base to the largest alignment a plan may ask for, so an entry's
	 * offset alone decides its alignment; give back the slack on both sides
	 * (munmap wants page-aligned addresses). */
	base = (char *)(((uintptr_t)raw + PLAN_MAX_ALIGN_BYTES - 1) &
			~(uintptr_t)(PLAN_MAX_ALIGN_BYTES - 1));
	end = base + round_up(bytes, page);
	if (base > raw)
		munmap(raw, (size_t)(base - raw));
	if (raw + map_bytes > end)
		munmap(end, (size_t)(raw + map_bytes - end));
	/* Huge pages where the kernel has them: blocks are placed by the plan, not by
	 * recency, so a 4 KiB-page arena takes a TLB miss on most claims. The plan
	 * means to use every byte of the arena at some point, so this costs no
	 * memory that the plan does not already count (measured: the same peak RSS
	 * on the benchmarks' workloads). */
	madvise(base, (size_t)(end - base), MADV_HUGEPAGE);
	coarse = meta;
	fine = (_Atomic uint64_t *)((char *)meta + coarse_bytes);
	granules = count;
	fine_words = words;
	if (prefault) {
		/* Touch every page now so the run itself takes no page faults. */
		for (uint64_t off = 0; off < bytes; off += page)
			((volatile char *)base)[off] = 0;
	}
	arena_base = (uintptr_t)base;
	arena_bytes = bytes;
	return 0;
}

/* Every operation on fine and coarse words is seq_cst: the handshake between the
 * two levels (arena.h) needs a single total order of them. The read-modify-writes
 * go through lone_atomic.h, which drops the bus lock while there is one thread. */

static bool coarse_test(uint64_t w)
{
	return atomic_load(&coarse[w / 64]) >> (w % 64) & 1;
}

/* Clears the coarse bits of fine words [lo, hi). */
static void coarse_clear(uint64_t lo, uint64_t hi)
{
	while (lo < hi) {
		uint64_t bit = lo % 64, n = 64 - bit < hi - lo ? 64 - bit : hi - lo;
		lone_fetch_and(&coarse[lo / 64], ~coarse_run(bit, n));
		lo += n;
	}
}

/* Takes fine words [lo, hi) whole at the coarse level: sets their coarse bits if
 * all are clear, then checks that their fine words hold nothing. On failure gives
 * back what it took. */
static bool coarse_take(uint64_t lo, uint64_t hi)
{
	for (uint64_t at = lo; at < hi;) {
		uint64_t bit = at % 64, n = 64 - bit < hi - at ? 64 - bit : hi - at;
		uint64_t mask = coarse_run(bit, n);
		_Atomic uint64_t *word = &coarse[at / 64];
		uint64_t old = atomic_load(word);
		do {
			if (old & mask) {
				coarse_clear(lo, at);
				return false;
			}
		} while (!lone_cas(word, &old, old | mask));
		at += n;
		for (uint64_t w = at - n; w < at; w++) {
			if (atomic_load(&fine[w])) {
				coarse_clear(lo, at);
				return false;
			}
		}
	}
	return true;
}

/* Sets the occupied bits mask of fine word w if they are all clear, then checks
 * that w is not held at the coarse level, then sets the bits marks (start or end
 * bits of the caller's block, which must need no other check). If the word
 * already held a start (a block that passed its check and is not yet released),
 * no coarse claim can hold w: the check is skipped and marks set in the same
 * step. On failure gives back what it took. */
static inline bool fine_take(uint64_t w, uint64_t mask, uint64_t marks)
{
	uint64_t old, add;

	/* One thread: the same checks, then one store (lone_atomic.h). */
	if (lone_thread()) {
		old = atomic_load_explicit(&fine[w], memory_order_relaxed);
		if (old & mask || (!(old & STARTS) && coarse_test(w)))
			return false;
		atomic_store_explicit(&fine[w], old | mask | marks, memory_order_relaxed);
		return true;
	}
	old = atomic_load(&fine[w]);
	do {
		if (old & mask)
			return false;
		add = old & STARTS ? mask | marks : mask;
	} while (!lone_cas(&fine[w], &old, old | add));
	if (add == mask) {
		if (coarse_test(w)) {
			lone_fetch_and(&fine[w], ~mask);
			return false;
		}
		if (marks)
			lone_fetch_or(&fine[w], marks);
	}
	return true;
}

/* Claims granules first..last, which span fine words w0 < w1: head and tail words
 * at the fine level, whole words between at the coarse level, in address order;
 * the end bit once the tail passed, then the start bit. Kept apart from the
 * one-word claim, the common case, so that it stays short. */
static __attribute__((noinline)) void *claim_span(uint64_t offset_bytes, uint64_t first,
						  uint64_t last)
{
	uint64_t w0 = first / WORD_GRANULES, b0 = first % WORD_GRANULES;
	uint64_t w1 = last / WORD_GRANULES, b1 = last % WORD_GRANULES;

	if (!fine_take(w0, occupied_run(b0, WORD_GRANULES - 1), 0))
		return NULL;
	if (!coarse_take(w0 + 1, w1))
		goto give_back_head;
	if (!fine_take(w1, occupied_run(0, b1), END(b1)))
		goto give_back_middle;
	lone_fetch_or(&fine[w0], START(b0));
	return (void *)(arena_base + offset_bytes);
give_back_middle:
	coarse_clear(w0 + 1, w1);
give_back_head:
	lone_fetch_and(&fine[w0], ~occupied_run(b0, WORD_GRANULES - 1));
	return NULL;
}

void *arena_claim(uint64_t offset_bytes, uint64_t size_bytes)
{
	uint64_t first = offset_bytes / PLAN_GRANULE_BYTES;
	uint64_t count = size_bytes / PLAN_GRANULE_BYTES + (size_bytes % PLAN_GRANULE_BYTES != 0);
	uint64_t last, w0, b0;

	if (offset_bytes % PLAN_GRANULE_BYTES || !count || first >= granules ||
	    count > granules - first)
		return NULL;
	last = first + count - 1;
	w0 = first / WORD_GRANULES;
	b0 = first % WORD_GRANULES;
	if (b0 + count > WORD_GRANULES)
		return claim_span(offset_bytes, first, last);
	return fine_take(w0, occupied_run(b0, b0 + count - 1), START(b0) | END(b0 + count - 1))
		   ? (void *)(arena_base + offset_bytes)
		   : NULL;
}

/* The first granule with its end bit set in fine words after w, or NO_END. */
static uint64_t end_after(uint64_t w)
{
	while (++w < fine_words) {
		uint64_t ends = atomic_load(&fine[w]) & ENDS;
		if (ends)
			return w * WORD_GRANULES + (uint64_t)__builtin_ctzll(ends) -
			       2 * WORD_GRANULES;
	}
	return NO_END;
}

/* The first end bit at or after bit b of a fine word's value, or -1. */
static inline int end_in(uint64_t word, uint64_t b)
{
	uint64_t ends = word & ENDS & (~UINT64_C(0) << (2 * WORD_GRANULES + b));

	return ends ? __builtin_ctzll(ends) - 2 * WORD_GRANULES : -1;
}

/* The rest of a block being released whose first word was w0: the words it
 * still holds, up to its end bit. */
static __attribute__((noinline)) void release_rest(uint64_t w0)
{
	uint64_t last = end_after(w0), w1;

	if (last == NO_END)
		return; /* cannot happen: a live block has its end bit */
	w1 = last / WORD_GRANULES;
	lone_fetch_and(&fine[w1],
		       ~(END(last % WORD_GRANULES) | occupied_run(0, last % WORD_GRANULES)));
	coarse_clear(w0 + 1, w1);
}

bool arena_release(const void *p)
{
	uint64_t offset = (uintptr_t)p - arena_base, g = offset / PLAN_GRANULE_BYTES;
	uint64_t w0 = g / WORD_GRANULES, b0 = g % WORD_GRANULES, old;
	int b1;

	if (offset % PLAN_GRANULE_BYTES || g >= granules)
		return false;
	/* Whoever clears the start bit owns the release: a racing double free finds
	 * it clear and does nothing. The block's part of this word goes in the same
	 * step, with its end bit if that is here too. */
	old = atomic_load(&fine[w0]);
	do {
		if (!(old & START(b0)))
			return false;
		b1 = end_in(old, b0);
	} while (!lone_cas(&fine[w0], &old,
			   old & ~(START(b0) | (b1 >= 0 ? END(b1) | occupied_run(b0, (uint64_t)b1)
							: occupied_run(b0, WORD_GRANULES - 1)))));
	if (b1 >= 0)
		return true;
	release_rest(w0);
	return true;
}

size_t arena_block_bytes(const void *p)
{
	uint64_t offset = (uintptr_t)p - arena_base, g = offset / PLAN_GRANULE_BYTES;
	uint64_t w0 = g / WORD_GRANULES, b0 = g % WORD_GRANULES, word, last;
	int b1;

	if (offset % PLAN_GRANULE_BYTES || g >= granules)
		return 0;
	word = atomic_load(&fine[w0]);
	if (!(word & START(b0)))
		return 0;
	b1 = end_in(word, b0);
	last = b1 >= 0 ? w0 * WORD_GRANULES + (uint64_t)b1 : end_after(w0);
	return last == NO_END ? 0 : (size_t)((last - g + 1) * PLAN_GRANULE_BYTES);
}
