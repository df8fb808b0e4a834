/* Spare space (src/preload/spare.c): the search for free granules that serves
 * what a plan missed. In an arena small enough that one search reads all of
 * it: a block goes into a hole that fits it, inside one word of the check or
 * across words, never into the coarse-held middle of a long block; a search
 * that finds nothing returns NULL only when no run of free granules is long
 * enough, and the thread then leaves its next searches to libc, twice as many
 * after each failure, though it still tries the places its last searches
 * found. Then four threads claim and release through it at random
 * against a shadow map of who owns each granule: no granule is ever handed out
 * twice. Last, kept words: a block that keeps its place stays out of them. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#include "arena.h"
#include "check.h"
#include "spare.h"

#define G	    PLAN_GRANULE_BYTES
#define GRANULES    1000 /* 48 words of the check: one search reads them all */
#define ARENA_BYTES (GRANULES * G)
#define NTHREADS    4
#define ROUNDS	    200000
#define HELD	    32

__thread int guard_depth __attribute__((tls_model("initial-exec")));

static _Atomic int owner[GRANULES];
static atomic_long errors, claims;

static size_t first_of(const void *p)
{
	return (size_t)((uintptr_t)p - arena_base) / G;
}

static void own(size_t first, size_t count, int from, int to)
{
	for (size_t g = first; g < first + count; g++) {
		int expected = from;
		if (!atomic_compare_exchange_strong(&owner[g], &expected, to))
			errors++;
	}
}

/* The longest run of granules no thread owns. */
static size_t longest_free(void)
{
	size_t best = 0, run = 0;

	for (size_t g = 0; g < GRANULES; g++) {
		run = atomic_load(&owner[g]) ? 0 : run + 1;
		if (run > best)
			best = run;
	}
	return best;
}

/* spare_claim, with the shadow map kept for thread id. */
static char *take(size_t bytes, int id)
{
	char *p = spare_claim(bytes, false);
	if (p) {
		size_t count = (bytes + G - 1) / G;
		if ((uintptr_t)p % G || arena_block_bytes(p) != count * G)
			errors++;
		own(first_of(p), count, 0, id);
		claims++;
	}
	return p;
}

static void give_back(char *p, int id)
{
	own(first_of(p), arena_block_bytes(p) / G, id, 0);
	if (!arena_release(p))
		errors++;
}

static void *churn(void *arg)
{
	int id = (int)(long)arg + 1;
	uint64_t seed = 0x9E3779B97F4A7C15u * (uint64_t)id;
	char *held[HELD] = {0};

	for (int round = 0; round < ROUNDS; round++) {
		int k = (int)(check_random(&seed) % HELD);
		if (held[k]) {
			give_back(held[k], id);
			held[k] = NULL;
		} else {
			uint64_t r = check_random(&seed);
			held[k] = take(r % 4 ? 1 + r % 200 : 1 + r % 700, id);
		}
	}
	for (int k = 0; k < HELD; k++)
		if (held[k])
			give_back(held[k], id);
	return NULL;
}

int main(void)
{
	pthread_t threads[NTHREADS];

	CHECK(arena_map(ARENA_BYTES, false) == 0);

	/* Held: granules [0, 30), [35, 100) and a long block [200, 900) whose
	 * middle words are held at the coarse level. Free: 5 granules at 30
	 * (inside word 1), 100 at 100 (across words 4 to 9), and 100 at 900. */
	char *a = arena_claim(0, 30 * G), *b = arena_claim(35 * G, 65 * G);
	char *big = arena_claim(200 * G, 700 * G);
	CHECK(a && b && big);
	own(0, 30, 0, 9);
	own(35, 65, 0, 9);
	own(200, 700, 0, 9);

	/* The tightest hole is not required, but the block must lie in a hole. */
	char *p = take(5 * G, 1);
	CHECK(p && arena_block_bytes(p) == 5 * G);
	char *q = take(90 * G - 7, 1); /* only the runs at 100 and at 900 fit */
	CHECK(q && (first_of(q) >= 900 || (first_of(q) >= 100 && first_of(q) + 90 <= 200)));
	CHECK_EQ_U64(atomic_load(&errors), 0);

	/* The places its searches found are tried before a search: p's, given
	 * back, takes the next block, though the search would start after q. */
	const size_t p_at = first_of(p);
	give_back(p, 1);
	p = take(4 * G, 1);
	CHECK(p && first_of(p) == p_at);

	/* Fill with blocks of 7 granules until the search finds nothing: it gives
	 * up only when no run of 7 is left. The thread then leaves its next miss
	 * to libc without a search, two after a second failure in a row, and
	 * searches again after those. */
	char *seven[200];
	int n = 0;
	while (n < 200 && (seven[n] = take(7 * G, 1)))
		n++;
	CHECK(n > 0 && n < 200);
	CHECK(longest_free() < 7);
	CHECK(!take(7 * G, 1)); /* skipped */
	CHECK(!take(7 * G, 1)); /* searched: a second failure */
	give_back(seven[0], 1);
	CHECK(longest_free() >= 7);
	CHECK(!take(7 * G, 1) && !take(7 * G, 1)); /* skipped, though there is room */
	seven[0] = take(7 * G, 1);
	CHECK(seven[0] != NULL);
	give_back(seven[1], 1);
	seven[1] = take(7 * G, 1); /* a success starts the count again */
	CHECK(seven[1] != NULL);
	for (int k = 0; k < n; k++)
		give_back(seven[k], 1);
	give_back(p, 1);
	give_back(q, 1);
	/* Longer than one search can place (more than half of what it reads). */
	CHECK(!spare_claim(700 * G, false));

	own(0, 30, 9, 0);
	own(35, 65, 9, 0);
	own(200, 700, 9, 0);
	CHECK(arena_release(a) && arena_release(b) && arena_release(big));
	CHECK_EQ_U64(atomic_load(&errors), 0);

	for (long i = 0; i < NTHREADS; i++)
		CHECK(pthread_create(&threads[i], NULL, churn, (void *)i) == 0);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(threads[i], NULL);
	CHECK_EQ_U64(atomic_load(&errors), 0);
	CHECK(atomic_load(&claims) > ROUNDS);
	for (size_t g = 0; g < GRANULES; g++)
		CHECK(atomic_load(&owner[g]) == 0);
	/* Everything was given back: the whole arena is one free run again. */
	char *all = arena_claim(0, ARENA_BYTES);
	CHECK(all && arena_release(all));

	/* Kept words: a block that keeps its place takes no granule of them,
	 * even when they are all the room there is; another block may. Words
	 * 0-23 (granules 0-503) kept, everything past them held. The map of
	 * this small arena is static data; for a big one it is mapped: both. */
	const uint64_t map_for[] = {ARENA_BYTES, UINT64_C(64) << 20};
	for (unsigned m = 0; m < 2; m++) {
		spare_keep_init(map_for[m]);
		spare_keep(0, 500 * G);
		spare_keep(200 * map_for[m], G); /* past the arena: nothing */
		char *rest = arena_claim(504 * G, (GRANULES - 504) * G);
		CHECK(rest);
		CHECK(!spare_claim(5 * G, true));
		char *k = spare_claim(5 * G, false); /* its searches are not held back */
		CHECK(k && first_of(k) + 5 <= 504);
		CHECK(arena_release(k) && arena_release(rest));
		/* With room past them, it goes there, though k's place, free again,
		 * is the one its thread found last. */
		CHECK(!spare_claim(5 * G, true)); /* skipped after its failed search */
		k = spare_claim(5 * G, true);
		CHECK(k && first_of(k) >= 504);
		CHECK(arena_release(k));
		/* Every word kept: it finds nothing; the map given back, it finds
		 * room. */
		spare_keep(0, UINT64_MAX);
		CHECK(!spare_claim(5 * G, true));
		spare_keep_drop();
		CHECK(!spare_claim(5 * G, true)); /* skipped after the failed search */
		k = spare_claim(5 * G, true);
		CHECK(k && arena_release(k));
	}
	return 0;
}
