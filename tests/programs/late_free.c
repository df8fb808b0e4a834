/* A run that holds blocks longer than its recording did, as a program whose
 * order depends on scheduling does (bash reaping its jobs as they end).
 *
 * First a scratch buffer of 8 KiB, written and freed: room in the arena that
 * the plan of the loop below never uses. Then ROUNDS turns of: one block from first(),
 * one from second(), each written with a pattern of its own. Plainly first's
 * block is freed before second() allocates, so a plan puts both at the same
 * place; with LATE_FREE=1 in the environment it is freed after second's,
 * whose planned place is then still held. Every block's pattern is checked
 * before it is freed: two live blocks that overlap fail the run. Prints a
 * checksum, the same either way. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROUNDS	      2000
#define BLOCK_BYTES   48
#define SCRATCH_BYTES 8192

static unsigned long sum;
/* Read in the loop, not tested once: a compiler that made one loop of each
 * way would give the calls other return addresses, so other call sites. */
static volatile int late;

static unsigned char *filled(size_t n, unsigned char pattern)
{
	unsigned char *p = malloc(n);

	if (!p) {
		fputs("late_free: out of memory\n", stderr);
		exit(1);
	}
	memset(p, pattern, n);
	return p;
}

/* Checks p's pattern, adds it to the checksum and frees it. */
static void checked_free(unsigned char *p, size_t n, unsigned char pattern)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != pattern) {
			fprintf(stderr, "late_free: block %p overwritten at byte %zu\n", (void *)p,
				i);
			exit(1);
		}
	sum += pattern;
	free(p);
}

static __attribute__((noinline)) unsigned char *first(int round)
{
	return filled(BLOCK_BYTES, (unsigned char)(2 * round));
}

static __attribute__((noinline)) unsigned char *second(int round)
{
	return filled(BLOCK_BYTES, (unsigned char)(2 * round + 1));
}

int main(void)
{
	const char *late_env = getenv("LATE_FREE");
	late = late_env && strcmp(late_env, "1") == 0;

	checked_free(filled(SCRATCH_BYTES, 0x5a), SCRATCH_BYTES, 0x5a);
	for (int round = 0; round < ROUNDS; round++) {
		unsigned char *a = first(round);
		if (!late)
			checked_free(a, BLOCK_BYTES, (unsigned char)(2 * round));
		unsigned char *b = second(round);
		if (late)
			checked_free(a, BLOCK_BYTES, (unsigned char)(2 * round));
		checked_free(b, BLOCK_BYTES, (unsigned char)(2 * round + 1));
	}
	printf("%lu\n", sum);
	return 0;
}
