/* A tight malloc/free loop, where an allocation-heavy program spends its time:
 * inside the allocator. Sizes and lifetimes come from a pseudo-random
 * sequence (a pool of live blocks, a random one replaced at each step), so the
 * trace has no period a recording could fold: its plan grows with the number
 * of allocations. usage: churn N (N rounds of 8 allocations, then prints a
 * checksum, at once even into a pipe, and returns) or churn forever (prints
 * "running", then loops until a signal ends it). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POOL 64

static unsigned char *pool[POOL];
static uint64_t state = 0x9e3779b97f4a7c15ull;

static uint64_t next(void)
{
	state ^= state << 13;
	state ^= state >> 7;
	state ^= state << 17;
	return state;
}

static __attribute__((noinline)) unsigned long round_of(void)
{
	unsigned long sum = 0;

	for (int i = 0; i < 8; i++) {
		uint64_t r = next();
		unsigned slot = (unsigned)(r % POOL);
		size_t n = 16 + (size_t)((r >> 8) % 2000);
		free(pool[slot]);
		pool[slot] = malloc(n);
		if (!pool[slot])
			exit(2);
		memset(pool[slot], (int)(r >> 32), n);
		sum += pool[slot][n - 1];
	}
	return sum;
}

int main(int argc, char **argv)
{
	unsigned long sum = 0;

	if (argc > 1 && !strcmp(argv[1], "forever")) {
		printf("running\n");
		fflush(stdout);
		for (;;)
			sum += round_of();
	}
	long rounds = argc > 1 ? atol(argv[1]) : 1000;
	for (long r = 0; r < rounds; r++)
		sum += round_of();
	for (int i = 0; i < POOL; i++)
		free(pool[i]);
	printf("done %ld %lu\n", rounds, sum);
	fflush(stdout); /* now: the plan is written after it, on the way out */
	return 0;
}
