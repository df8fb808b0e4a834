/* The replay arena's occupancy check, which is what keeps replay from handing out
 * overlapping memory, under four threads claiming and releasing random,
 * overlapping ranges. A shadow array records which thread owns each granule; a
 * claim that succeeds on a granule someone else owns, a release that fails on a
 * block its thread holds, or a wrong block size is an error. Also: double and
 * interior frees are refused. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "arena.h"
#include "check.h"

#define ARENA_BYTES (1u << 20)
#define GRANULES    (ARENA_BYTES / PLAN_GRANULE_BYTES)
#define HELD        64
#define ROUNDS      150000
#define NTHREADS    4

static _Atomic int owner[GRANULES];
static atomic_long errors;

static void own(size_t first, size_t count, int from, int to)
{
	for (size_t g = first; g < first + count; g++) {
		int expected = from;
		if (!atomic_compare_exchange_strong(&owner[g], &expected, to))
			errors++;
	}
}

static void *run(void *arg)
{
	int id = (int)(long)arg + 1;
	unsigned seed = (unsigned)id * 7919u;
	char *held[HELD] = {0};
	size_t held_bytes[HELD];

	for (int round = 0; round < ROUNDS; round++) {
		int k = rand_r(&seed) % HELD;
		if (held[k]) {
			size_t first = (size_t)((uintptr_t)held[k] - arena_base) / PLAN_GRANULE_BYTES;
			own(first, held_bytes[k] / PLAN_GRANULE_BYTES, id, 0);
			if (!arena_release(held[k]))
				errors++;
			held[k] = NULL;
			continue;
		}
		size_t granules = 1 + (size_t)(rand_r(&seed) % (rand_r(&seed) % 8 ? 8 : 300));
		uint64_t offset = (uint64_t)(rand_r(&seed) % (GRANULES - 400)) * PLAN_GRANULE_BYTES;
		char *p = arena_claim(offset, granules * PLAN_GRANULE_BYTES - 3);
		if (!p)
			continue;
		own(offset / PLAN_GRANULE_BYTES, granules, 0, id);
		if (arena_block_bytes(p) != granules * PLAN_GRANULE_BYTES)
			errors++;
		held[k] = p;
		held_bytes[k] = granules * PLAN_GRANULE_BYTES;
	}
	for (int k = 0; k < HELD; k++) {
		if (!held[k])
			continue;
		own((size_t)((uintptr_t)held[k] - arena_base) / PLAN_GRANULE_BYTES,
		    held_bytes[k] / PLAN_GRANULE_BYTES, id, 0);
		if (!arena_release(held[k]))
			errors++;
	}
	return NULL;
}

int main(void)
{
	pthread_t threads[4];

	CHECK(arena_map(ARENA_BYTES, false) == 0);
	CHECK(arena_base % PLAN_MAX_ALIGN_BYTES == 0);

	char *a = arena_claim(0, 100);
	CHECK(a && arena_owns(a) && arena_block_bytes(a) == 112);
	CHECK(!arena_claim(96, 16));          /* overlaps a's last granule */
	CHECK(!arena_release(a + 16));        /* not a block start */
	CHECK(arena_claim(112, 16) != NULL);  /* touching is fine */
	CHECK(arena_release(a));
	CHECK(!arena_release(a));             /* double free: refused */
	CHECK(arena_block_bytes(a) == 0);
	CHECK(arena_release((char *)arena_base + 112));

	for (long i = 0; i < NTHREADS; i++)
		CHECK(pthread_create(&threads[i], NULL, run, (void *)i) == 0);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(threads[i], NULL);
	CHECK_EQ_U64(atomic_load(&errors), 0);
	for (size_t g = 0; g < GRANULES; g++)
		CHECK(atomic_load(&owner[g]) == 0);
	/* Everything was released: the whole arena can be claimed at once. */
	CHECK(arena_claim(0, ARENA_BYTES) != NULL);
	return 0;
}
