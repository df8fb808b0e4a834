/* Which slots of the replayed image's pools may be free: a bit per slot, set
 * when its chunk opens (pool_slots_open) and when a block is freed at or inside
 * the slot once it has, cleared when a claim takes it or finds it busy. The arena's check stays the only authority (arena.h): a bit
 * says only where to look first, so that an allocation in a pool finds a free
 * slot at once instead of trying busy ones in turn (on a churn whose small
 * pools were full, trying them took 70% of the run). A stale bit costs one
 * failed claim; a slot whose bit was lost (a block straddling two slots, freed
 * at the first) is found again when a block in it is freed.
 *
 * Bits are set and cleared with atomics (one bus-locked operation each, none
 * while the process has one thread: lone_atomic.h), from any thread. */
#pragma once

#include <stdatomic.h>
#include <stdint.h>

#include "lone_atomic.h"
#include "plan_file.h"

/* One pool's bits. */
struct pool_slots {
	_Atomic uint64_t *bits; /* bit s: slot s may be free */
	uint32_t words;
	_Atomic uint32_t cursor; /* the word to look in first */
};

/* Makes the bits of pools[0..pool_count) into slots[0..pool_count), every chunk
 * closed (no bit set), and the map from arena offsets (of an arena of
 * arena_bytes) to the slots of chunks[0..chunk_count). Returns 0 or -ENOMEM.
 * May allocate. */
int pool_slots_init(const struct plan_pool *pools, uint32_t pool_count,
		    const struct plan_chunk *chunks, uint32_t chunk_count, uint64_t arena_bytes,
		    struct pool_slots *slots);

/* Opens chunk (an index into the chunks given to pool_slots_init): its slots
 * may be free from now on. Thread-safe. */
void pool_slots_open(uint32_t chunk);

/* Gives back what pool_slots_init made (slots[0..pool_count)). */
void pool_slots_fini(struct pool_slots *slots, uint32_t pool_count);

uint32_t pool_slots_search(struct pool_slots *p);

/* A slot of p whose bit is set, from its cursor on, its bit cleared now; or
 * UINT32_MAX if none is. Inline for the common case, a set bit in the word at
 * the cursor; else the words are searched. Thread-safe. */
static inline uint32_t pool_slots_take(struct pool_slots *p)
{
	const uint32_t w = atomic_load_explicit(&p->cursor, memory_order_relaxed);
	const uint64_t bits = atomic_load_explicit(&p->bits[w], memory_order_relaxed);
	const uint64_t bit = bits & -bits;

	if (bits && (lone_fetch_and(&p->bits[w], ~bit) & bit))
		return 64 * w + (uint32_t)__builtin_ctzll(bit);
	if (p->words == 1 && !atomic_load_explicit(&p->bits[0], memory_order_relaxed))
		return UINT32_MAX; /* a small pool, full: the common case of a tight one */
	return pool_slots_search(p);
}

/* The page map: for each page of the arena, 0 if no chunk lies in it, else 1 +
 * the first chunk (in offset order) that does. */
extern uint32_t *pool_slots_page_map;

void pool_slots_freed_in(uint64_t offset, uint32_t first);

/* A block at offset of the arena was freed: the slot holding offset, if a pool's
 * chunk does, may be free. Inline, as it runs on every free of an arena block:
 * one load for a block outside the pools. Thread-safe. */
static inline void pool_slots_freed(uint64_t offset)
{
	uint32_t first;

	if (pool_slots_page_map && (first = pool_slots_page_map[offset >> 12]))
		pool_slots_freed_in(offset, first - 1);
}
