/* The same allocations, from the same call sites, in every mode; then, on a
 * block that replay serves from its arena, the heap bug named by argv[1]:
 *   double-free:   frees a block twice;
 *   interior:      frees a pointer 16 bytes into a block;
 *   realloc-freed: reallocs a block already freed;
 *   pool-double-free, pool-interior: the same on a block of a loop's site,
 *                  which the plan serves from a pool past its first 4096;
 *   clean:         no bug.
 * With HEAP_BUGS_CLEAN=1 in the environment the bug is left out, so that a
 * run with the same arguments (a plan is found by executable and arguments)
 * can be recorded without it. glibc aborts on each bug (or crashes, for an
 * interior pointer); replay must not go on silently. Prints "survived MODE"
 * if the program goes on past the bug. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCKS 32
#define RING   16
#define LOOPS  20000

static __attribute__((noinline)) void *get(size_t n)
{
	void *p = malloc(n);
	asm volatile("" ::: "memory");
	return p;
}

/* The loop's own site. */
static __attribute__((noinline)) void *get_looped(size_t n)
{
	void *p = malloc(n);
	asm volatile("" ::: "memory");
	return p;
}

static __attribute__((noinline)) void *grow(void *p, size_t n)
{
	void *q = realloc(p, n);
	asm volatile("" ::: "memory");
	return q;
}

static __attribute__((noinline)) void release(void *p)
{
	free(p);
	asm volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "clean";
	const char *clean = getenv("HEAP_BUGS_CLEAN");
	char *blocks[BLOCKS], *ring[RING] = {0};

	setvbuf(stdout, NULL, _IONBF, 0); /* nothing of stdio's in between */
	for (int i = 0; i < BLOCKS; i++) {
		blocks[i] = get(64 + (size_t)i * 16);
		if (!blocks[i])
			return 2;
		memset(blocks[i], i, 64 + (size_t)i * 16);
	}
	/* A loop in a steady state: folded into pools when recorded. */
	for (int i = 0; i < LOOPS; i++) {
		size_t n = 32 + (size_t)(i % 7) * 16;
		char *p = get_looped(n);
		if (!p)
			return 2;
		memset(p, i, n);
		release(ring[i % RING]);
		ring[i % RING] = p;
	}
	/* The victim: block 10, freed by release(). */
	char *victim = blocks[10];
	release(victim);
	if (strcmp(mode, "clean") && strcmp(mode, "double-free") && strcmp(mode, "interior") &&
	    strcmp(mode, "realloc-freed") && strcmp(mode, "pool-double-free") &&
	    strcmp(mode, "pool-interior"))
		return 2;
	if (clean && !strcmp(clean, "1"))
		mode = "clean";
	if (!strcmp(mode, "double-free"))
		release(victim);
	else if (!strcmp(mode, "interior"))
		release(blocks[20] + 16);
	else if (!strcmp(mode, "realloc-freed"))
		victim = grow(victim, 4000);
	else if (!strcmp(mode, "pool-double-free"))
		release(ring[0]), release(ring[0]);
	else if (!strcmp(mode, "pool-interior"))
		release(ring[1] + 16);
	printf("survived %s\n", mode);
	for (int i = 0; i < BLOCKS; i++)
		if (i != 10 && !(i == 20 && !strcmp(mode, "interior")))
			release(blocks[i]);
	for (int i = 2; i < RING; i++)
		release(ring[i]);
	return 0;
}
