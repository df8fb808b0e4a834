/* Allocations from 256 distinct call sites (16 x 16 chains of distinct
 * functions), with pseudo-random sizes and lifetimes: a plan keeps entries
 * per site, so this one grows with the rounds (to a few MB), whatever a
 * recording folds of a site's steady state. usage: many_sites ROUNDS (each
 * round allocates once from every site); prints a checksum, flushed at once,
 * then returns (the plan is written after the line). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POOL 512

static unsigned char *pool[POOL];
static uint64_t state = 0x2545f4914f6cdd1dull;
static unsigned long sum;

static uint64_t next(void)
{
	state ^= state << 13;
	state ^= state >> 7;
	state ^= state << 17;
	return state;
}

/* The leaf: one allocation into a random slot of the pool (freeing what was
 * there), tagged with the chain's numbers. */
static __attribute__((noinline)) void leaf(unsigned a, unsigned b)
{
	uint64_t r = next();
	unsigned slot = (unsigned)(r % POOL);
	size_t n = 16 + (size_t)((r >> 16) % 3000);

	free(pool[slot]);
	pool[slot] = malloc(n);
	if (!pool[slot])
		exit(2);
	memset(pool[slot], (int)(a * 16 + b), n);
	sum += pool[slot][n / 2] + n;
	asm volatile("" ::: "memory");
}

/* Sixteen distinct second-level functions (each its own constant, so the
 * compiler cannot fold them into one), each calling leaf. */
#define B(j)                                                                                \
	static __attribute__((noinline)) void b##j(unsigned a)                              \
	{                                                                                   \
		leaf(a, j);                                                                 \
		asm volatile("" ::: "memory");                                              \
	}
B(0) B(1) B(2) B(3) B(4) B(5) B(6) B(7) B(8) B(9) B(10) B(11) B(12) B(13) B(14) B(15)
static void (*const bs[16])(unsigned) = {b0, b1, b2,  b3,  b4,	b5,  b6,  b7,
					 b8, b9, b10, b11, b12, b13, b14, b15};

/* Sixteen distinct first-level functions, each calling every second-level one. */
#define A(i)                                                                                \
	static __attribute__((noinline)) void a##i(void)                                    \
	{                                                                                   \
		for (unsigned j = 0; j < 16; j++)                                           \
			bs[j](i);                                                           \
		asm volatile("" ::: "memory");                                              \
	}
A(0) A(1) A(2) A(3) A(4) A(5) A(6) A(7) A(8) A(9) A(10) A(11) A(12) A(13) A(14) A(15)
static void (*const as[16])(void) = {a0, a1, a2,  a3,  a4,  a5,	 a6,  a7,
				     a8, a9, a10, a11, a12, a13, a14, a15};

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 100;

	for (long r = 0; r < rounds; r++)
		for (unsigned i = 0; i < 16; i++)
			as[i]();
	for (int i = 0; i < POOL; i++)
		free(pool[i]);
	printf("done %ld %lu\n", rounds, sum);
	fflush(stdout); /* now: the plan is written after it, on the way out */
	return 0;
}
