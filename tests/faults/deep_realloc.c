/* Allocates, reallocs and frees from the bottom of a chain of 200 frames, then
 * from the top of the stack, and prints a checksum of what it wrote: a replay
 * that unwinds to the plan's depth must not overrun its buffers however deep
 * the stack is. usage: deep_realloc [FRAMES] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned long sum;

static __attribute__((noinline)) void work(int round)
{
	char *p = malloc(24);
	if (!p)
		exit(2);
	for (int i = 0; i < 40; i++) {
		size_t n = 24 + (size_t)(i * 53 + round) % 900;
		p = realloc(p, n);
		if (!p)
			exit(2);
		memset(p, 'a' + i % 26, n);
		sum += (unsigned char)p[n / 2] + n;
	}
	free(p);
}

static __attribute__((noinline)) void descend(int frames, int round)
{
	volatile char pad[32];

	pad[0] = (char)frames;
	if (frames > 0)
		descend(frames - 1, round);
	else
		work(round);
	asm volatile("" ::: "memory"); /* no tail call: every level is a frame */
	(void)pad[0];
}

int main(int argc, char **argv)
{
	int frames = argc > 1 ? atoi(argv[1]) : 200;

	for (int round = 0; round < 20; round++) {
		descend(frames, round);
		work(round);
	}
	printf("deep %d sum %lu\n", frames, sum);
	return 0;
}
