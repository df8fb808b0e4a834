/* The replay arena's occupancy check, which is what keeps replay from handing out
 * overlapping memory, under four threads claiming and releasing random,
 * overlapping ranges: small blocks inside one word of the check, and big blocks
 * whose middle is held at the coarse level, racing for the same granules. A
 * shadow array records which thread owns each granule; a claim that succeeds on
 * a granule someone else owns, a release that fails on a block its thread holds,
 * or a wrong block size is an error; the same in one thread alone, where the check
 * takes other paths. Also: double and interior frees are refused,
 * a big block and a small one exclude each other at either level, the arena's
 * trimmed tail is given back to the system, and a retired arena's blocks keep
 * their sizes. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "arena.h"
#include "check.h"

#define G	    PLAN_GRANULE_BYTES
#define ARENA_BYTES ((1u << 20) + 3 * G) /* not a page multiple */
#define GRANULES    (ARENA_BYTES / G)
#define BIG_MAX	    2400 /* granules: about 110 words of the check */
#define HELD	    64
#define ROUNDS	    150000
#define NTHREADS    4

/* arena.c reads the reentrancy guard (guard.h), which the library defines in
 * init.c: here nothing is nested. */
__thread int guard_depth __attribute__((tls_model("initial-exec")));

static _Atomic int owner[GRANULES];
static atomic_long errors, big_claims, small_claims;

static void own(size_t first, size_t count, int from, int to)
{
	for (size_t g = first; g < first + count; g++) {
		int expected = from;
		if (!atomic_compare_exchange_strong(&owner[g], &expected, to))
			errors++;
	}
}

static size_t first_of(const char *p)
{
	return (size_t)((uintptr_t)p - arena_base) / G;
}

/* Where the threads claim (granules [lo, lo + span)), how big a big block gets,
 * how many blocks a thread holds at most, and for how many rounds. */
static struct {
	size_t lo, span, big_max;
	int held, rounds;
} phase;

static void *run(void *arg)
{
	int id = (int)(long)arg + 1;
	uint64_t seed = 0x9E3779B97F4A7C15u * (uint64_t)id + (uint64_t)phase.span;
	char *held[HELD] = {0};
	size_t held_granules[HELD];

	for (int round = 0; round < phase.rounds; round++) {
		int k = (int)(check_random(&seed) % (uint64_t)phase.held);
		if (held[k]) {
			if (arena_block_bytes(held[k]) != held_granules[k] * G)
				errors++;
			own(first_of(held[k]), held_granules[k], id, 0);
			if (!arena_release(held[k]))
				errors++;
			held[k] = NULL;
			continue;
		}
		/* Mostly small blocks; one in eight up to 300 granules; one in sixteen
		 * big (spanning many whole words of the check). */
		uint64_t r = check_random(&seed);
		bool is_big = r % 16 == 0;
		size_t granules = is_big       ? 40 + (size_t)(r >> 8) % (phase.big_max - 40)
				  : r % 8 == 1 ? 1 + (size_t)(r >> 8) % 300
					       : 1 + (size_t)(r >> 8) % 8;
		size_t first =
		    phase.lo + (size_t)(check_random(&seed) % (phase.span - granules + 1));
		char *p = arena_claim((uint64_t)first * G, granules * G - 3);
		if (!p)
			continue;
		own(first, granules, 0, id);
		if (arena_block_bytes(p) != granules * G)
			errors++;
		if (is_big)
			big_claims++;
		else
			small_claims++;
		held[k] = p;
		held_granules[k] = granules;
	}
	for (int k = 0; k < HELD; k++) {
		if (!held[k])
			continue;
		own(first_of(held[k]), held_granules[k], id, 0);
		if (!arena_release(held[k]))
			errors++;
	}
	return NULL;
}

int main(void)
{
	pthread_t threads[NTHREADS];
	long page = sysconf(_SC_PAGESIZE);
	unsigned char vec;

	CHECK(arena_map(ARENA_BYTES, false) == 0);
	CHECK(arena_base % PLAN_MAX_ALIGN_BYTES == 0);
	/* The over-mapping was trimmed to the page after the arena's end. */
	uintptr_t tail = (arena_base + ARENA_BYTES + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
	CHECK(mincore((void *)(tail - (uintptr_t)page), (size_t)page, &vec) == 0);
	CHECK(mincore((void *)tail, (size_t)page, &vec) == -1 && errno == ENOMEM);

	char *a = arena_claim(0, 100);
	CHECK(a && arena_owns(a) && arena_block_bytes(a) == 112);
	CHECK(!arena_claim(96, 16));	     /* overlaps a's last granule */
	CHECK(!arena_release(a + 16));	     /* not a block start */
	CHECK(arena_claim(112, 16) != NULL); /* touching is fine */
	CHECK(arena_release(a));
	CHECK(!arena_release(a)); /* double free: refused */
	CHECK(arena_block_bytes(a) == 0);
	CHECK(arena_release((char *)arena_base + 112));
	CHECK(!arena_claim(8, 16));		     /* not a granule multiple */
	CHECK(!arena_claim(ARENA_BYTES - G, 2 * G)); /* past the end */
	CHECK(!arena_claim(ARENA_BYTES, G));
	CHECK(arena_release(arena_claim(ARENA_BYTES - G, G)));

	/* A big block (head and tail words fine, many words coarse) against small
	 * blocks at either level, and the other way round. */
	uint64_t at = 1000 * G, big_bytes = 5000 * G;
	char *big = arena_claim(at, big_bytes - 5);
	CHECK(big && arena_block_bytes(big) == big_bytes);
	for (uint64_t off = at - 2 * G; off < at + big_bytes + 2 * G; off += 5 * G) {
		bool inside = off + 3 * G > at && off < at + big_bytes;
		char *s = arena_claim(off, 3 * G);
		CHECK(inside ? !s : s && arena_release(s));
	}
	CHECK(!arena_release(big + 2000 * G)); /* interior: refused */
	CHECK(arena_block_bytes(big + 2000 * G) == 0);
	char *before = arena_claim(at - 64 * G, 64 * G),
	     *after = arena_claim(at + big_bytes, 64 * G);
	CHECK(before && after && arena_block_bytes(before) == 64 * G);
	CHECK(arena_release(big));
	CHECK(!arena_release(big));
	char *small = arena_claim(at + 2000 * G, G); /* inside a word the big block held coarse */
	CHECK(small && arena_block_bytes(small) == G);
	CHECK(!arena_claim(at, big_bytes));
	CHECK(!arena_claim(at + 1000 * G, 2000 * G));
	CHECK(arena_release(small));
	big = arena_claim(at, big_bytes);
	CHECK(big && arena_block_bytes(big) == big_bytes);
	CHECK(arena_release(big) && arena_release(before) && arena_release(after));

	/* All over the arena, then crowded into 12 KiB, where small claims keep
	 * meeting the big blocks' coarse words: first in this thread alone, while
	 * the check takes its plain-store paths (lone_atomic.h), then in four. */
	for (int threaded = 0; threaded < 2; threaded++) {
		for (int crowded = 0; crowded < 2; crowded++) {
			phase.lo = crowded ? 5000 : 0;
			phase.span = crowded ? 768 : GRANULES;
			phase.big_max = crowded ? 400 : BIG_MAX;
			phase.held = crowded ? 4 : HELD;
			phase.rounds = crowded ? 4 * ROUNDS : ROUNDS;
			if (!threaded) {
				CHECK(lone_thread());
				run((void *)0);
				continue;
			}
			for (long i = 0; i < NTHREADS; i++)
				CHECK(pthread_create(&threads[i], NULL, run, (void *)i) == 0);
			for (int i = 0; i < NTHREADS; i++)
				pthread_join(threads[i], NULL);
		}
	}
	CHECK_EQ_U64(atomic_load(&errors), 0);
	/* The race had both kinds in it. */
	CHECK(atomic_load(&big_claims) > 1000 && atomic_load(&small_claims) > 100000);
	for (size_t g = 0; g < GRANULES; g++)
		CHECK(atomic_load(&owner[g]) == 0);
	/* Everything was released: the whole arena can be claimed at once. */
	char *all = arena_claim(0, ARENA_BYTES);
	CHECK(all && arena_block_bytes(all) == ARENA_BYTES);
	CHECK(arena_release(all));

	/* Retired (a forked child's own arena replaces it): its live blocks keep
	 * their sizes, one word, two, or many with a coarse middle; anything else
	 * in it reads as no block; the new arena serves, and knows nothing of them. */
	char *one = arena_claim(5 * G, 3 * G), *two = arena_claim(20 * G, 4 * G),
	     *many = arena_claim(at, big_bytes);
	CHECK(one && two && many);
	CHECK(arena_retire());
	CHECK(!arena_owns(one) && !arena_owns(many));
	CHECK(arena_retired_owns(one) && arena_retired_owns(many + big_bytes - 1));
	CHECK(!arena_retired_owns(one + ARENA_BYTES + 4096) && !arena_retired_owns(&vec));
	CHECK(arena_retired_block_bytes(one) == 3 * G);
	CHECK(arena_retired_block_bytes(two) == 4 * G);
	CHECK(arena_retired_block_bytes(many) == big_bytes);
	CHECK(arena_retired_block_bytes(many + G) == 0);
	CHECK(arena_retired_block_bytes(one - 5 * G) == 0); /* freed before */
	CHECK(!arena_claim(0, G));			     /* no arena now */
	CHECK(arena_map(64 * G, false) == 0);
	char *fresh = arena_claim(0, 2 * G);
	CHECK(fresh && arena_owns(fresh) && !arena_retired_owns(fresh));
	CHECK(arena_block_bytes(fresh) == 2 * G && arena_block_bytes(one) == 0);
	for (unsigned i = 1; i < ARENA_RETIRED_MAX; i++)
		CHECK(arena_retire() && arena_map(G, false) == 0);
	CHECK(!arena_retire()); /* no room: the arena stays */
	CHECK(arena_owns((void *)arena_base));
	CHECK(arena_retired_block_bytes(many) == big_bytes);
	return 0;
}
