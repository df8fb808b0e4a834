/* Big-buffer layers: the allocation pattern of an inference loop. A fixed sequence of
 * layers runs ITERATIONS times; each layer allocates its output (1-16 MiB) and a
 * scratch workspace, writes both in full, reads its input, then frees the workspace
 * and the input. A few weight blocks live for the whole run. Writing every byte
 * makes the resident set real, so page-fault and return-to-kernel costs show.
 *
 * usage: bench-layers ITERATIONS [LAYERS]
 * Sizes come from a fixed seed, so every run has the same layer sequence. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB	   ((size_t)1 << 20)
#define MAX_LAYERS 64
#define WEIGHTS	   4

static uint64_t rng_state = 0x243F6A8885A308D3ULL;

static uint64_t next_random(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1DULL;
}

static __attribute__((noinline)) char *alloc_weights(size_t n)
{
	return malloc(n);
}

static __attribute__((noinline)) char *alloc_output(size_t n)
{
	return malloc(n);
}

static __attribute__((noinline)) char *alloc_workspace(size_t n)
{
	return malloc(n);
}

static char *checked(char *p)
{
	if (!p) {
		fprintf(stderr, "bench-layers: out of memory\n");
		exit(1);
	}
	return p;
}

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: bench-layers ITERATIONS [LAYERS]\n");
		return 2;
	}
	long iterations = strtol(argv[1], NULL, 10);
	long layers = argc == 3 ? strtol(argv[2], NULL, 10) : 12;
	if (iterations < 1 || layers < 1 || layers > MAX_LAYERS) {
		fprintf(stderr, "bench-layers: ITERATIONS >= 1, LAYERS in 1..%d\n", MAX_LAYERS);
		return 2;
	}

	size_t out_bytes[MAX_LAYERS], work_bytes[MAX_LAYERS];
	for (long l = 0; l < layers; l++) {
		/* 1 to 16 MiB, not page multiples, as tensor shapes rarely are. */
		out_bytes[l] = MIB + (size_t)(next_random() % (15 * MIB));
		work_bytes[l] = MIB + (size_t)(next_random() % (7 * MIB));
	}

	char *weights[WEIGHTS];
	for (int w = 0; w < WEIGHTS; w++) {
		size_t n = 4 * MIB + (size_t)w * MIB;
		weights[w] = checked(alloc_weights(n));
		memset(weights[w], w + 1, n);
	}

	uint64_t checksum = 0;
	for (long it = 0; it < iterations; it++) {
		size_t in_bytes = 4096;
		char *in = checked(alloc_output(in_bytes));
		memset(in, 1, in_bytes);
		for (long l = 0; l < layers; l++) {
			char *out = checked(alloc_output(out_bytes[l]));
			char *work = checked(alloc_workspace(work_bytes[l]));
			memset(work, (int)l, work_bytes[l]);
			memset(out, (int)(it + l), out_bytes[l]);
			/* Read the input and a weight block a page at a time, like a kernel
			 * that consumes them, and mix into the output. */
			for (size_t i = 0; i < in_bytes; i += 4096)
				checksum += (unsigned char)in[i];
			const char *wb = weights[l % WEIGHTS];
			for (size_t i = 0; i < out_bytes[l] && i < 4 * MIB; i += 4096)
				out[i] ^= wb[i];
			checksum += (unsigned char)work[work_bytes[l] - 1];
			free(work);
			free(in);
			in = out;
			in_bytes = out_bytes[l];
		}
		checksum += (unsigned char)in[in_bytes / 2];
		free(in);
	}
	for (int w = 0; w < WEIGHTS; w++)
		free(weights[w]);
	printf("layers iterations=%ld layers=%ld checksum=%" PRIu64 "\n", iterations, layers,
	       checksum);
	return 0;
}
