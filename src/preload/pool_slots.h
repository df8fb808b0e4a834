/* The replayed image's pools, as replay serves them: each slot of a pool, once
 * the pool has used it, stays the pool's, held in the arena (arena.h) as one
 * block from then on, so that serving and freeing its blocks are a bit taken
 * and a bit given back, with no arena check of their own (on an allocator-bound
 * churn the check and its release took a quarter of replay's instructions).
 *
 * A pool's slots are numbered through its chunks in order, each chunk's first
 * slot at a multiple of 64, so that a word of bits lies in one chunk and a
 * slot's place is that word's offset and a multiply. Three bits a slot:
 *  - fresh: its chunk is open (pool_slots_open) and the pool does not hold it;
 *    it may be free in the arena (cleared when a claim takes it or finds it
 *    busy, set again when a block freed in it leaves it free, maybe);
 *  - owned: the pool holds it in the arena, for good;
 *  - ready: owned and free, to be served at once.
 * An owned slot that is not ready is live: served and not yet freed. So taking
 * a slot is one bit cleared and freeing it one bit set, whose old value tells a
 * double free (with threads, one `lock btr` and one `lock bts`; a bit of its
 * own for live took one more of each, 15% of a 4-thread churn's replay).
 * Soundness rests on the arena's check alone, as for exact entries: a slot
 * becomes the pool's only by an arena claim of the whole slot, which no other
 * live block overlaps (arena.h), and the pool never lets it go, so no other
 * claim can take its bytes while the pool serves them. A plan whose chunks
 * overlap (a hostile one) makes some claims fail, never two owners. A free of a
 * slot's start goes to the pool that owns it; of an owned slot not live, a
 * double free, is refused (the caller aborts, as glibc does).
 *
 * Bits change with atomics (one bus-locked operation each, none while the
 * process has one thread: lone_atomic.h), from any thread. */
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "arena.h"
#include "lone_atomic.h"
#include "plan_file.h"

/* One pool's slots: all that an allocation served by the pool reads but the
 * bits, on one cache line. A pool's size and alignment once lay apart, with a
 * pointer here: a cache line more a call, and replaying sqlite3, a quarter more
 * first-level cache misses (callgrind's simulation, docs/history.md). */
struct __attribute__((aligned(64))) pool_slots {
	_Atomic uint64_t *ready, *owned, *fresh; /* words each, bit s: slot s */
	uint64_t *word_offset;			 /* arena offset of slot 64 w */
	uint64_t slot_bytes;
	uint32_t align_bytes; /* every slot is aligned to it */
	uint32_t words;
	_Atomic uint32_t cursor;       /* the word of ready to look in first */
	_Atomic uint32_t fresh_cursor; /* the word of fresh to look in first */
	/* Whether ready (fresh) may have a bit set: cleared by a search before it
	 * looks, set by whatever sets a bit. A pool whose blocks pile up has no
	 * ready slot for its whole run, and a full one no fresh slot: without
	 * these, each of its allocations scanned every word (perl filling a hash
	 * of 200,000 keys: 57% of replay's time). A hint only: a search skipped
	 * by a race costs a slot, never a wrong one. */
	_Atomic bool ready_maybe, fresh_maybe;
};
_Static_assert(sizeof(struct pool_slots) == 64, "one cache line");

/* Notes that a bit of p's ready or fresh words was set: flag is one of p's two
 * hints. Writes the flag only when it changes, so that it stays shared between
 * the threads that read it. */
static inline void pool_slots_hint(_Atomic bool *flag)
{
	if (!atomic_load_explicit(flag, memory_order_relaxed))
		atomic_store_explicit(flag, true, memory_order_relaxed);
}

/* Makes the slots of pools[0..pool_count) into slots[0..pool_count) (zeroed
 * and aligned to 64 by the caller), every chunk closed (no bit set), and the map
 * from arena offsets (of an arena of mapped_bytes) to the slots of
 * chunks[0..chunk_count). Returns 0 or -ENOMEM. May allocate. */
int pool_slots_init(const struct plan_pool *pools, uint32_t pool_count,
		    const struct plan_chunk *chunks, uint32_t chunk_count, uint64_t mapped_bytes,
		    struct pool_slots *slots);

/* Opens chunk (an index into the chunks given to pool_slots_init): its slots
 * may be taken from now on. Thread-safe. */
void pool_slots_open(uint32_t chunk);

/* Gives back what pool_slots_init made (slots[0..pool_count)). */
void pool_slots_fini(struct pool_slots *slots, uint32_t pool_count);

/* What pool_slots_take and pool_slots_release_in do past their common case. */
uint64_t pool_slots_take_search(struct pool_slots *p);
uint64_t pool_slots_take_fresh(struct pool_slots *p, uint32_t tries);

/* No slot: what pool_slots_take returns. */
#define POOL_SLOTS_NONE UINT64_MAX

/* A ready slot of p in the word at its cursor, now live: its arena offset, or
 * POOL_SLOTS_NONE. The common case of pool_slots_take. Thread-safe. */
static inline uint64_t pool_slots_take_near(struct pool_slots *p)
{
	const uint32_t w = atomic_load_explicit(&p->cursor, memory_order_relaxed);
	const uint64_t bits = atomic_load_explicit(&p->ready[w], memory_order_relaxed);

	if (!bits)
		return POOL_SLOTS_NONE;
	const unsigned n = (unsigned)__builtin_ctzll(bits); /* undefined for 0 */
	if (!lone_test_and_clear(&p->ready[w], n))
		return POOL_SLOTS_NONE;
	return p->word_offset[w] + (uint64_t)n * p->slot_bytes;
}

/* A ready slot of p, now live: its arena offset; else, trying up to tries
 * fresh slots, one the arena gave the pool; else POOL_SLOTS_NONE.
 * Thread-safe. */
static inline uint64_t pool_slots_take(struct pool_slots *p, uint32_t tries)
{
	uint64_t offset = pool_slots_take_near(p);

	if (offset == POOL_SLOTS_NONE && p->words > 1)
		offset = pool_slots_take_search(p);
	return offset != POOL_SLOTS_NONE ? offset : pool_slots_take_fresh(p, tries);
}

/* What a free of an arena block found. */
enum pool_release {
	POOL_NOT_SLOT, /* no slot a pool owns starts there: the arena's to release */
	POOL_RELEASED, /* a live slot: it is ready again */
	POOL_NOT_LIVE, /* a slot a pool owns, not live: a double free */
	POOL_NO_CHUNK, /* not even in an open chunk: the arena's to release, and no
			* slot may be fresh again (pool_slots_freed) */
};

/* A chunk, as the page map finds it: its bytes, its pool, its first slot's
 * number in the pool, and its slot size as a multiplier (the number of a slot
 * is then a multiplication, not a division). */
struct chunk_span {
	uint64_t start, end;
	struct pool_slots *pool;
	uint32_t first_slot, slot_count;
	uint32_t chunk;	     /* its index in the plan */
	_Atomic bool opened; /* pool_slots_open */
	uint64_t slot_bytes;
	uint64_t inverse; /* 2^64 / slot_bytes + 1: exact for offsets below 2^32 */
};

/* The page map: for each page of the arena, 0 if no chunk lies in it, else 1 +
 * the first span (in pool_slots_spans, by offset) that does; and how many spans
 * lie in each page (when spans are disjoint, that first and those right after
 * it). */
extern uint32_t *pool_slots_page_map;
extern uint32_t *pool_slots_page_spans;
/* For a page that POOL_SLOTS_LINES_MIN spans or more lie in (disjoint spans
 * only), 1 + k: its 64-byte lines' entries in pool_slots_lines start at
 * k * POOL_SLOTS_PAGE_LINES, each the first of the page's spans (counted from
 * the page's first) that ends after the line's start; else 0. */
#define POOL_SLOTS_LINES_MIN  4u
#define POOL_SLOTS_PAGE_LINES 64u
extern uint32_t *pool_slots_page_lines;
extern uint8_t *pool_slots_lines;
extern struct chunk_span *pool_slots_spans;
/* No two spans overlap (every plan memplan writes): the last span that starts
 * at or before an offset is the only one that can hold it. */
extern bool pool_slots_spans_disjoint;

/* The slot of span s that holds offset (in s), into *slot; whether offset is
 * its start. */
static inline bool chunk_span_slot(const struct chunk_span *s, uint64_t offset, uint32_t *slot)
{
	uint64_t into = offset - s->start;
	uint64_t k = into >> 32 ? into / s->slot_bytes
				: (uint64_t)(((unsigned __int128)into * s->inverse) >> 64);

	*slot = s->first_slot + (uint32_t)k;
	return k * s->slot_bytes == into;
}

/* Frees live slot slot of p, owned: ready again, where the next block of p
 * looks first (still in the cache). POOL_NOT_LIVE if it was not live (it was
 * ready already). */
static inline enum pool_release pool_slots_give_back(struct pool_slots *p, uint32_t slot)
{
	if (lone_test_and_set(&p->ready[slot / 64], slot % 64))
		return POOL_NOT_LIVE;
	atomic_store_explicit(&p->cursor, slot / 64, memory_order_relaxed);
	pool_slots_hint(&p->ready_maybe);
	return POOL_RELEASED;
}

enum pool_release pool_slots_release_in(uint64_t offset, uint32_t first);

/* A block at offset of the arena is freed: if it is a live slot of a pool, the
 * slot is ready again. Inline, as it runs on every free of an arena block: one
 * load for a block outside the pools, and in a plan memplan wrote, for a page
 * of many chunks, a look-up by the 64-byte line (sqlite3 puts dozens in a
 * page; a search from the first of them took 125 instructions a free, and 75
 * on an allocator-bound churn, 9.6% of its replay; a bisection, about 45 of
 * them), or a bisection of a few. Thread-safe. */
static inline enum pool_release pool_slots_release(uint64_t offset)
{
	uint32_t first, slot;

	if (!pool_slots_page_map || !(first = pool_slots_page_map[offset >> 12]))
		return POOL_NO_CHUNK;
	if (!pool_slots_spans_disjoint)
		return pool_slots_release_in(offset, first - 1);
	/* The page's first span, or the last of the others that starts at or
	 * before offset. */
	const struct chunk_span *s = &pool_slots_spans[first - 1];
	if (offset >= s->end) {
		uint32_t n = pool_slots_page_spans[offset >> 12] - 1, lines;
		if (!n)
			return POOL_NO_CHUNK;
		if ((lines = pool_slots_page_lines[offset >> 12])) {
			/* The first span that ends after the line's start, then past
			 * those that end before offset (a few: slots are 16 bytes at
			 * least). */
			const struct chunk_span *last = s + n;
			s += pool_slots_lines[(uint64_t)(lines - 1) * POOL_SLOTS_PAGE_LINES +
					      (offset >> 6) % POOL_SLOTS_PAGE_LINES];
			while (s < last && offset >= s->end)
				s++;
		} else {
			/* Without a branch on the comparison, which goes either way
			 * at random: the halving steps depend on the page alone. */
			s++;
			while (n > 1) {
				const uint32_t half = n / 2;
				s = s[half].start <= offset ? s + half : s;
				n -= half;
			}
		}
	}
	if (offset < s->start || offset >= s->end ||
	    !atomic_load_explicit(&s->opened, memory_order_relaxed))
		return POOL_NO_CHUNK;
	if (chunk_span_slot(s, offset, &slot) &&
	    atomic_load_explicit(&s->pool->owned[slot / 64], memory_order_relaxed) >> (slot % 64) &
		1)
		return pool_slots_give_back(s->pool, slot);
	return POOL_NOT_SLOT;
}

void pool_slots_freed_in(uint64_t offset, uint32_t first);

/* A block at offset of the arena, no pool's slot, was released: the slot of an
 * open chunk that holds offset, if any, may be free, and is fresh again.
 * Thread-safe. */
static inline void pool_slots_freed(uint64_t offset)
{
	uint32_t first;

	if (pool_slots_page_map && (first = pool_slots_page_map[offset >> 12]))
		pool_slots_freed_in(offset, first - 1);
}

/* Frees the arena block that starts at p (arena_owns(p)): a pool's live slot
 * goes back to its pool; any other block is released in the arena, and the
 * slot of an open chunk it lay in is fresh again. Returns false if p is no live
 * block's start (a double or wild free: the caller aborts). Thread-safe. */
static inline __attribute__((always_inline)) bool pool_slots_arena_free(const void *p)
{
	const uint64_t offset = (uintptr_t)p - arena_base;

	switch (pool_slots_release(offset)) {
	case POOL_RELEASED:
		return true;
	case POOL_NOT_LIVE:
		return false;
	case POOL_NO_CHUNK:
		return arena_release(p);
	default:
		if (!arena_release(p))
			return false;
		pool_slots_freed(offset);
		return true;
	}
}
