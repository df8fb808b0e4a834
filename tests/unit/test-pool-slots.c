/* Replay's pool slots (pool_slots.h) on the two patterns that starve a search:
 * a site whose blocks pile up (no slot is ever freed, so no slot is ever ready)
 * and a pool whose chunks are all used (no slot is fresh). Every slot is served
 * once, at its own offset inside its chunk, before the pool says it is full; a
 * slot given back is served again; a block of the arena freed over a slot that
 * the pool could not claim makes that slot fresh again. The hints that let
 * a search skip words with no bit set are cleared by a search that found
 * nothing and set again by whatever sets a bit: a search is skipped only where
 * it would have found nothing. A block of the program beside the chunks is
 * no slot. A free finds its slot whichever of a dozen chunks in its page
 * holds it. */
#include <stdbool.h>
#include <stdlib.h>

#include "arena.h"
#include "check.h"
#include "pool_slots.h"

/* arena.c reads the reentrancy guard (guard.h), which the library defines in
 * init.c: here nothing is nested. */
__thread int guard_depth __attribute__((tls_model("initial-exec")));

#define SLOT_BYTES 48
/* Two chunks, neither a multiple of 64 slots, the second well apart and in
 * the middle of a page. */
#define CHUNK0_SLOTS  150
#define CHUNK1_SLOTS  70
#define CHUNK1_OFFSET (64 * 1024 + 2048)
#define ALL_SLOTS     (CHUNK0_SLOTS + CHUNK1_SLOTS)
/* A second pool: twelve small chunks in one page, with gaps between them,
 * most ending inside a 64-byte line that the next one starts in (the free's
 * look-up by line must go past the first). */
#define SMALL_BYTES  16
#define SMALL_SLOTS  3
#define SMALL_PAGE   (128 * 1024)
#define SMALL_STRIDE 80 /* chunk k at SMALL_PAGE + k * SMALL_STRIDE */
#define SMALL_CHUNKS 12

static bool in_chunks(uint64_t offset)
{
	if (offset < CHUNK0_SLOTS * SLOT_BYTES)
		return offset % SLOT_BYTES == 0;
	return offset >= CHUNK1_OFFSET && offset < CHUNK1_OFFSET + CHUNK1_SLOTS * SLOT_BYTES &&
	       (offset - CHUNK1_OFFSET) % SLOT_BYTES == 0;
}

int main(void)
{
	const struct plan_pool pools[2] = {
	    {.align_bytes = 16,
	     .slot_bytes = SLOT_BYTES,
	     .chunk_count = 2,
	     .slot_count = ALL_SLOTS},
	    {.align_bytes = 16,
	     .slot_bytes = SMALL_BYTES,
	     .first_chunk = 2,
	     .chunk_count = SMALL_CHUNKS,
	     .slot_count = SMALL_CHUNKS * SMALL_SLOTS},
	};
	struct plan_chunk chunks[2 + SMALL_CHUNKS] = {
	    {.offset_bytes = 0, .slot_count = CHUNK0_SLOTS},
	    {.offset_bytes = CHUNK1_OFFSET, .pool = 0, .slot_count = CHUNK1_SLOTS},
	};
	for (uint32_t k = 0; k < SMALL_CHUNKS; k++)
		chunks[2 + k] = (struct plan_chunk){.offset_bytes = SMALL_PAGE + k * SMALL_STRIDE,
						    .pool = 1,
						    .slot_count = SMALL_SLOTS};
	static struct pool_slots slots[2];
	static bool seen[ALL_SLOTS];
	uint64_t taken[ALL_SLOTS];

	CHECK(arena_map(256 * 1024, false) == 0);
	CHECK(pool_slots_init(pools, 2, chunks, 2 + SMALL_CHUNKS, arena_bytes, slots) == 0);
	struct pool_slots *p = &slots[0];

	/* Closed chunks: nothing to serve, and nothing to search. */
	CHECK(pool_slots_take(p, 4) == POOL_SLOTS_NONE);
	CHECK(!atomic_load(&p->ready_maybe) && !atomic_load(&p->fresh_maybe));

	/* A block of the program lies over slot 3 of chunk 0 before it opens. */
	void *squatter = arena_claim(3 * SLOT_BYTES, SLOT_BYTES);
	CHECK(squatter != NULL);
	pool_slots_open(0);
	pool_slots_open(1);
	CHECK(atomic_load(&p->fresh_maybe));

	/* Piling up: every slot but the squatter's served once, none freed. */
	size_t n = 0;
	for (uint64_t off; (off = pool_slots_take(p, 4)) != POOL_SLOTS_NONE; n++) {
		CHECK(n < ALL_SLOTS && in_chunks(off));
		size_t k = off < CHUNK1_OFFSET ? off / SLOT_BYTES
					       : CHUNK0_SLOTS + (off - CHUNK1_OFFSET) / SLOT_BYTES;
		CHECK(!seen[k]);
		seen[k] = true;
		taken[n] = off;
	}
	CHECK(n == ALL_SLOTS - 1 && !seen[3]);
	/* Full: the searches that found nothing left both hints clear, so the
	 * next allocations of this pool look at no word. */
	CHECK(!atomic_load(&p->ready_maybe) && !atomic_load(&p->fresh_maybe));
	CHECK(pool_slots_take(p, 4) == POOL_SLOTS_NONE);

	/* A slot given back, away from where the last take looked, is served
	 * again. */
	CHECK(pool_slots_release(taken[5]) == POOL_RELEASED);
	CHECK(pool_slots_release(taken[5]) == POOL_NOT_LIVE);
	CHECK(atomic_load(&p->ready_maybe));
	CHECK(pool_slots_take(p, 4) == taken[5]);
	atomic_store(&p->cursor, 0); /* the search, not the word it left off in */
	CHECK(pool_slots_release(taken[n - 1]) == POOL_RELEASED);
	atomic_store(&p->cursor, 0);
	CHECK(pool_slots_take(p, 4) == taken[n - 1]);

	/* A block of the program in the page of chunk 1, before it: no slot. */
	void *neighbour = arena_claim(64 * 1024 + 512, 100);
	CHECK(neighbour != NULL);
	CHECK(pool_slots_release(64 * 1024 + 512) == POOL_NO_CHUNK);
	CHECK(pool_slots_arena_free(neighbour));
	CHECK(arena_block_bytes(neighbour) == 0); /* released */

	/* The squatter leaves: its slot is fresh again, and the pool claims it. */
	CHECK(pool_slots_arena_free(squatter));
	CHECK(atomic_load(&p->fresh_maybe));
	CHECK(pool_slots_take(p, 4) == 3 * SLOT_BYTES);
	CHECK(pool_slots_take(p, 4) == POOL_SLOTS_NONE);

	/* Twelve chunks in a page: every slot is freed back to its pool once, and
	 * refused the second time, whichever chunk of the page it lies in. */
	struct pool_slots *small = &slots[1];
	uint64_t small_taken[SMALL_CHUNKS * SMALL_SLOTS];
	for (uint32_t k = 0; k < SMALL_CHUNKS; k++)
		pool_slots_open(2 + k);
	for (n = 0; n < SMALL_CHUNKS * SMALL_SLOTS; n++) {
		small_taken[n] = pool_slots_take(small, SMALL_CHUNKS * SMALL_SLOTS);
		CHECK(small_taken[n] != POOL_SLOTS_NONE);
		CHECK((small_taken[n] - SMALL_PAGE) % SMALL_STRIDE < SMALL_SLOTS * SMALL_BYTES);
	}
	CHECK(pool_slots_take(small, SMALL_CHUNKS * SMALL_SLOTS) == POOL_SLOTS_NONE);
	for (n = 0; n < SMALL_CHUNKS * SMALL_SLOTS; n++) {
		CHECK(pool_slots_release(small_taken[n]) == POOL_RELEASED);
		CHECK(pool_slots_release(small_taken[n]) == POOL_NOT_LIVE);
		/* Inside a slot, not at its start: not one. */
		CHECK(pool_slots_release(small_taken[n] + 8) == POOL_NOT_SLOT);
	}
	/* Blocks of the program between the chunks, and past the last. */
	for (uint32_t k = 0; k < SMALL_CHUNKS; k++) {
		uint64_t gap = SMALL_PAGE + k * SMALL_STRIDE + SMALL_SLOTS * SMALL_BYTES;
		void *q = arena_claim(gap, SMALL_STRIDE - SMALL_SLOTS * SMALL_BYTES);
		CHECK(q != NULL);
		CHECK(pool_slots_release(gap) == POOL_NO_CHUNK);
		CHECK(pool_slots_arena_free(q));
		CHECK(arena_block_bytes(q) == 0);
	}

	pool_slots_fini(slots, 2);
	return 0;
}
