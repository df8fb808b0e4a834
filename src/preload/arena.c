/* The replay arena and its occupancy check, see arena.h for the soundness argument. */
#define _GNU_SOURCE
#include "arena.h"

#include <errno.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <unistd.h>

#include "guard.h"
#include "log.h"
#include "lone_atomic.h"
#include "prefault.h"

/* Fine words on a page of the check. */
#define FINE_WORDS_PER_PAGE (4096 / sizeof(uint64_t))

uintptr_t arena_base;
uint64_t arena_bytes;

#define NO_END UINT64_MAX

_Atomic uint64_t *arena_fine, *arena_coarse;

/* The pages of the check (from arena_coarse on) that map_words mapped: bit p
 * for page p. A hint, so relaxed: a page mapped twice costs a call. */
static _Atomic uint64_t *check_pages_mapped;

uint64_t arena_granules, arena_fine_words;

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
	uint64_t count = plan_granules_of(bytes);
	uint64_t words = (count + ARENA_WORD_GRANULES - 1) / ARENA_WORD_GRANULES;
	uint64_t coarse_bytes = round_up((words + 63) / 64 * 8, 64);
	uint64_t check_pages = (coarse_bytes + words * 8 + page - 1) / page;
	uint64_t meta_bytes = coarse_bytes + words * 8 + (check_pages + 63) / 64 * 8;
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
	/* Huge pages as the system's policy says, as glibc and mimalloc leave them.
	 * Asked for with MADV_HUGEPAGE, the churn benchmark ran no faster, and the
	 * big-buffer one 13% faster run back to back but 1.6x slower after the
	 * machine had idled a few seconds (a fresh huge page is 2 MiB to clear,
	 * which a virtual machine may first fetch from its host); and a partly
	 * used huge page counts 2 MiB resident. */
	arena_coarse = meta;
	arena_fine = (_Atomic uint64_t *)((char *)meta + coarse_bytes);
	check_pages_mapped = arena_fine + words;
	arena_granules = count;
	arena_fine_words = words;
	/* Mapped now, so that the run itself takes no page faults: in one call,
	 * or a write a page where the kernel has no such call. */
	if (prefault && madvise(base, (size_t)round_up(bytes, page), MADV_POPULATE_WRITE) != 0)
		for (uint64_t off = 0; off < bytes; off += page)
			((volatile char *)base)[off] = 0;
	arena_base = (uintptr_t)base;
	arena_bytes = bytes;
	return 0;
}

/* Clears the coarse bits of fine words [lo, hi). */
static void coarse_clear(uint64_t lo, uint64_t hi)
{
	while (lo < hi) {
		uint64_t bit = lo % 64, n = 64 - bit < hi - lo ? 64 - bit : hi - lo;
		lone_fetch_and(&arena_coarse[lo / 64], ~coarse_run(bit, n));
		lo += n;
	}
}

/* Whether fine words [lo, hi) all hold nothing. Relaxed loads, OR-ed eight at
 * a time: a 16 MiB block's middle is 50,000 words, which seq_cst loads kept
 * one at a time (each a barrier to the compiler). What orders them after the
 * caller's coarse CAS is its fence (arena.h, point 1). */
static bool fine_words_clear(uint64_t lo, uint64_t hi)
{
	_Atomic uint64_t *const fine = arena_fine;
	uint64_t w = lo;

#define WORD(i) atomic_load_explicit(&fine[w + (i)], memory_order_relaxed)
	for (; w + 8 <= hi; w += 8)
		if (WORD(0) | WORD(1) | WORD(2) | WORD(3) | WORD(4) | WORD(5) | WORD(6) | WORD(7))
			return false; /* unrolled by hand: gcc does not unroll atomics */
#undef WORD
	for (; w < hi; w++)
		if (atomic_load_explicit(&fine[w], memory_order_relaxed))
			return false;
	return true;
}

/* Takes fine words [lo, hi) whole at the coarse level: sets their coarse bits if
 * all are clear, then checks that their fine words hold nothing. On failure gives
 * back what it took. */
static bool coarse_take(uint64_t lo, uint64_t hi)
{
	for (uint64_t at = lo; at < hi;) {
		uint64_t bit = at % 64, n = 64 - bit < hi - at ? 64 - bit : hi - at;
		uint64_t mask = coarse_run(bit, n);
		_Atomic uint64_t *word = &arena_coarse[at / 64];
		uint64_t old = atomic_load(word);
		do {
			if (old & mask) {
				coarse_clear(lo, at);
				return false;
			}
		} while (!lone_cas(word, &old, old | mask));
		/* The fence of point 1 (arena.h); with one thread, program order. */
		if (!lone_thread())
			atomic_thread_fence(memory_order_seq_cst);
		at += n;
		if (!fine_words_clear(at - n, at)) {
			coarse_clear(lo, at);
			return false;
		}
	}
	return true;
}

/* Maps the pages of fine words [lo, hi) not mapped before, in one call. A
 * claim reads the fine words of a block's middle, and those no block ever held
 * are zero pages not mapped yet, a fault each (10 us here, in a virtual
 * machine): a replayed sort's big buffer read 50 of them. Mapped for reading,
 * they stay the zero page: no memory. */
static void map_words(uint64_t lo, uint64_t hi)
{
	const uintptr_t meta = (uintptr_t)arena_coarse, page = 4096;
	const uint64_t first = ((uintptr_t)&arena_fine[lo] - meta) / page;
	const uint64_t last = ((uintptr_t)&arena_fine[hi] - 1 - meta) / page;
	uint64_t from = UINT64_MAX, to = 0;

	for (uint64_t p = first; p <= last; p++)
		if (!(atomic_load_explicit(&check_pages_mapped[p / 64], memory_order_relaxed) &
		      (UINT64_C(1) << (p % 64)))) {
			from = from == UINT64_MAX ? p : from;
			to = p;
		}
	if (from == UINT64_MAX)
		return;
	prefault_read((const void *)(meta + from * page), (to - from + 1) * page);
	for (uint64_t p = from; p <= to; p++)
		atomic_fetch_or_explicit(&check_pages_mapped[p / 64], UINT64_C(1) << (p % 64),
					 memory_order_relaxed);
}

/* Claims granules first..last, which span fine words w0 < w1: head and tail words
 * at the fine level, whole words between at the coarse level, in address order;
 * the end bit once the tail passed, then the start bit. Kept apart from the
 * one-word claim, the common case, so that it stays short. */
void *arena_claim_span(uint64_t offset_bytes, uint64_t first, uint64_t last)
{
	uint64_t w0 = first / ARENA_WORD_GRANULES, b0 = first % ARENA_WORD_GRANULES;
	uint64_t w1 = last / ARENA_WORD_GRANULES, b1 = last % ARENA_WORD_GRANULES;

	if (!arena_fine_take(w0, arena_occupied_run(b0, ARENA_WORD_GRANULES - 1), 0))
		return NULL;
	if (w1 - w0 > 2 * FINE_WORDS_PER_PAGE)
		map_words(w0 + 1, w1);
	if (!coarse_take(w0 + 1, w1))
		goto give_back_head;
	if (!arena_fine_take(w1, arena_occupied_run(0, b1), ARENA_END(b1)))
		goto give_back_middle;
	lone_fetch_or(&arena_fine[w0], ARENA_START(b0));
	return (void *)(arena_base + offset_bytes);
give_back_middle:
	coarse_clear(w0 + 1, w1);
give_back_head:
	lone_fetch_and(&arena_fine[w0], ~arena_occupied_run(b0, ARENA_WORD_GRANULES - 1));
	return NULL;
}

/* The first granule with its end bit set in fine words after w, or NO_END. */
static uint64_t end_after(_Atomic uint64_t *fine, uint64_t words, uint64_t w)
{
	while (++w < words) {
		uint64_t ends = atomic_load(&fine[w]) & ARENA_ENDS;
		if (ends)
			return w * ARENA_WORD_GRANULES + (uint64_t)__builtin_ctzll(ends) -
			       2 * ARENA_WORD_GRANULES;
	}
	return NO_END;
}

/* The end of the live block whose start is in fine word w0 and whose end is not:
 * end_after(w0). With one thread, its middle words are skipped a coarse word at a
 * time: they are the ones held at the coarse level right after w0 (held by the
 * block itself), and its last word is the next, which it holds at the fine level.
 * With several threads a failing coarse claim may set a coarse bit for a moment
 * (arena.h, point 1), so every fine word is read; so too in a release that
 * interrupted another arena operation of its thread (a signal handler's free:
 * the guard was set already), which may be such a claim. A 16 MiB block has
 * 50,000 fine words, 800 coarse ones. */
static uint64_t block_end_after(uint64_t w0)
{
	uint64_t w = w0 + 1;

	if (!lone_thread() || guard_depth > 1)
		return end_after(arena_fine, arena_fine_words, w0);
	while (w < arena_fine_words) {
		uint64_t held =
		    atomic_load_explicit(&arena_coarse[w / 64], memory_order_relaxed) >> (w % 64);
		if (!(held & 1))
			break;
		/* The run of held words from w, to the end of this coarse word at most. */
		w += ~held ? (uint64_t)__builtin_ctzll(~held) : 64 - w % 64;
	}
	return end_after(arena_fine, arena_fine_words, w - 1);
}

static atomic_bool pages_kept;

void arena_keep_pages(void)
{
	atomic_store(&pages_kept, true);
}

/* Gives back the pages of granules [first, last] of a block being released,
 * which it holds until its caller clears them (arena.h, ARENA_GIVE_BACK_BYTES). */
static void give_back_pages(uint64_t first, uint64_t last)
{
	const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	const uintptr_t from = (arena_base + first * PLAN_GRANULE_BYTES + page - 1) & ~(page - 1);
	const uintptr_t to = (arena_base + (last + 1) * PLAN_GRANULE_BYTES) & ~(page - 1);

	if (to > from && !atomic_load_explicit(&pages_kept, memory_order_relaxed))
		madvise((void *)from, to - from, MADV_DONTNEED);
}

/* The rest of a block being released whose first word was w0: the words it
 * still holds, up to its end bit. */
void arena_release_rest(uint64_t w0)
{
	/* Most such blocks end in the next word (that with one thread is done
	 * inline, arena_release): its first end bit is theirs (arena.h, point 3).
	 * callgrind, the 4-thread churn replay: 1.6% fewer instructions. */
	if (w0 + 1 < arena_fine_words) {
		int end = arena_end_in(atomic_load(&arena_fine[w0 + 1]), 0);
		if (end >= 0) {
			lone_fetch_and(&arena_fine[w0 + 1],
				       ~(ARENA_END(end) | arena_occupied_run(0, (uint64_t)end)));
			return;
		}
	}
	uint64_t last = block_end_after(w0), w1;

	if (last == NO_END)
		return; /* cannot happen: a live block has its end bit */
	w1 = last / ARENA_WORD_GRANULES;
	/* Its words after the first are still its own (the first is free again). */
	if ((last + 1 - (w0 + 1) * ARENA_WORD_GRANULES) * PLAN_GRANULE_BYTES >=
	    ARENA_GIVE_BACK_BYTES)
		give_back_pages((w0 + 1) * ARENA_WORD_GRANULES, last);
	lone_fetch_and(&arena_fine[w1], ~(ARENA_END(last % ARENA_WORD_GRANULES) |
					  arena_occupied_run(0, last % ARENA_WORD_GRANULES)));
	coarse_clear(w0 + 1, w1);
}

/* The first granule of the live block at offset in an arena of granules
 * granules, whose first fine word is read by first_word; or NO_END if offset is
 * not the start of a live block. */
static uint64_t block_start(uint64_t offset, uint64_t granules, _Atomic uint64_t *fine,
			    uint64_t *first_word)
{
	uint64_t g = offset / PLAN_GRANULE_BYTES;

	if (offset % PLAN_GRANULE_BYTES || g >= granules)
		return NO_END;
	*first_word = atomic_load(&fine[g / ARENA_WORD_GRANULES]);
	return *first_word & ARENA_START(g % ARENA_WORD_GRANULES) ? g : NO_END;
}

/* Bytes from granule g to granule last, NO_END giving 0. */
static size_t block_size(uint64_t g, uint64_t last)
{
	return last == NO_END ? 0 : (size_t)((last - g + 1) * PLAN_GRANULE_BYTES);
}

size_t arena_block_bytes(const void *p)
{
	uint64_t word, g = block_start((uintptr_t)p - arena_base, arena_granules, arena_fine, &word);
	uint64_t w0 = g / ARENA_WORD_GRANULES;
	int b1;

	if (g == NO_END)
		return 0;
	b1 = arena_end_in(word, g % ARENA_WORD_GRANULES);
	return block_size(g, b1 >= 0 ? w0 * ARENA_WORD_GRANULES + (uint64_t)b1
				     : block_end_after(w0));
}

struct retired_arena {
	uintptr_t base;
	uint64_t bytes, granules, fine_words;
	_Atomic uint64_t *fine;
};

static struct retired_arena retired[ARENA_RETIRED_MAX];
unsigned arena_retired_count;

bool arena_retire(void)
{
	if (!arena_bytes)
		return true;
	if (arena_retired_count == ARENA_RETIRED_MAX)
		return false;
	retired[arena_retired_count++] = (struct retired_arena){
	    arena_base, arena_bytes, arena_granules, arena_fine_words, arena_fine,
	};
	arena_base = 0;
	arena_bytes = 0;
	arena_granules = 0;
	arena_fine_words = 0;
	arena_fine = arena_coarse = NULL;
	return true;
}

static const struct retired_arena *retired_of(const void *p)
{
	for (unsigned i = 0; i < arena_retired_count; i++)
		if ((uintptr_t)p - retired[i].base < retired[i].bytes)
			return &retired[i];
	return NULL;
}

bool arena_retired_find(const void *p)
{
	return retired_of(p) != NULL;
}

/* Every fine word is read in the search for the end: a claim of the parent's that
 * fork cut short may have left coarse bits that no block holds. */
size_t arena_retired_block_bytes(const void *p)
{
	const struct retired_arena *r = retired_of(p);
	uint64_t word, g;
	int b1;

	if (!r || (g = block_start((uintptr_t)p - r->base, r->granules, r->fine, &word)) == NO_END)
		return 0;
	b1 = arena_end_in(word, g % ARENA_WORD_GRANULES);
	return block_size(g, b1 >= 0 ? g / ARENA_WORD_GRANULES * ARENA_WORD_GRANULES + (uint64_t)b1
				     : end_after(r->fine, r->fine_words, g / ARENA_WORD_GRANULES));
}

void arena_bad_pointer(const char *call, const void *p)
{
	static const char hex[] = "0123456789abcdef";
	char text[2 + 16 + 1] = "0x";
	uintptr_t v = (uintptr_t)p;

	for (int i = 0; i < 16; i++)
		text[2 + i] = hex[(v >> (60 - 4 * i)) & 15];
	text[18] = '\0';
	log_error(call, "(): invalid pointer ", text,
		  ": not a live block of the arena (a double free, or a pointer into a block)",
		  NULL);
	abort();
}
