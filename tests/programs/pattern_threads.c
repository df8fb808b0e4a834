/* N threads allocate blocks from several call sites, fill each with a pattern
 * unique to the block, check the pattern before freeing, and report corruption.
 * Deterministic per thread (fixed seeds), so a recording replays well; under
 * replay any overlap between live blocks shows up as a pattern mismatch.
 * usage: pattern_threads [THREADS [ROUNDS]]; prints a checksum, exits 1 on
 * corruption. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LIVE 64

struct worker {
	unsigned id;
	unsigned rounds;
	uint64_t checksum;
	unsigned long corrupt;
};

static uint64_t next_random(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void fill(unsigned char *p, size_t n, uint64_t tag)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)(tag + i * 31);
}

static int intact(const unsigned char *p, size_t n, uint64_t tag)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != (unsigned char)(tag + i * 31))
			return 0;
	return 1;
}

/* Separate functions so that blocks come from distinct call sites. */
static __attribute__((noinline)) void *site_small(size_t n)
{
	return malloc(n);
}

static __attribute__((noinline)) void *site_zeroed(size_t n)
{
	return calloc(1, n);
}

static __attribute__((noinline)) void *site_big(size_t n)
{
	return malloc(n * 64);
}

static void *run(void *arg)
{
	struct worker *w = arg;
	unsigned char *blocks[LIVE] = {0};
	size_t sizes[LIVE] = {0};
	uint64_t tags[LIVE] = {0}, seed = 0x9e3779b97f4a7c15ull * (w->id + 1);

	for (unsigned r = 0; r < w->rounds; r++) {
		unsigned slot = (unsigned)(next_random(&seed) % LIVE);
		if (blocks[slot]) {
			if (!intact(blocks[slot], sizes[slot], tags[slot]))
				w->corrupt++;
			w->checksum += blocks[slot][sizes[slot] / 2];
			if (next_random(&seed) % 4 == 0) {
				/* Grow or shrink, keeping the prefix. */
				size_t n = 1 + next_random(&seed) % 600;
				unsigned char *q = realloc(blocks[slot], n);
				size_t keep = n < sizes[slot] ? n : sizes[slot];
				if (!q || !intact(q, keep, tags[slot]))
					w->corrupt++;
				blocks[slot] = q;
				sizes[slot] = n;
				fill(q, n, tags[slot]);
				continue;
			}
			free(blocks[slot]);
			blocks[slot] = NULL;
			continue;
		}
		size_t n = 1 + next_random(&seed) % 500;
		switch (next_random(&seed) % 3) {
		case 0:
			blocks[slot] = site_small(n);
			break;
		case 1:
			blocks[slot] = site_zeroed(n);
			for (size_t i = 0; i < n; i++)
				if (blocks[slot][i])
					w->corrupt++;
			break;
		default:
			n *= 64;
			blocks[slot] = site_big(n / 64);
			break;
		}
		sizes[slot] = n;
		tags[slot] = next_random(&seed);
		fill(blocks[slot], n, tags[slot]);
	}
	for (unsigned s = 0; s < LIVE; s++) {
		if (blocks[s] && !intact(blocks[s], sizes[s], tags[s]))
			w->corrupt++;
		free(blocks[s]);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned threads = argc > 1 ? (unsigned)atoi(argv[1]) : 4;
	unsigned rounds = argc > 2 ? (unsigned)atoi(argv[2]) : 20000;
	pthread_t tid[64];
	struct worker w[64];
	uint64_t checksum = 0;
	unsigned long corrupt = 0;

	if (threads < 1 || threads > 64)
		return 2;
	for (unsigned i = 0; i < threads; i++) {
		w[i] = (struct worker){.id = i, .rounds = rounds};
		pthread_create(&tid[i], NULL, run, &w[i]);
	}
	for (unsigned i = 0; i < threads; i++) {
		pthread_join(tid[i], NULL);
		checksum += w[i].checksum;
		corrupt += w[i].corrupt;
	}
	printf("threads %u rounds %u checksum %llu\n", threads, rounds,
	       (unsigned long long)checksum);
	if (corrupt) {
		fprintf(stderr, "pattern_threads: %lu corrupted blocks\n", corrupt);
		return 1;
	}
	return 0;
}
