/* Small-object churn: the allocation pattern of a program that builds and drops many
 * small records (parsers, interpreters, servers). Millions of 16-512 byte blocks from
 * six call sites with different lifetimes: freed at once, held in rings of various
 * sizes, long-lived tables, calloc'ed records and realloc-grown vectors.
 *
 * usage: [CHURN_TOUCH=BYTES] bench-churn OPS [THREADS]
 * Each of THREADS threads (default 1) runs OPS operations with its own fixed seed, on
 * the same call sites, as a thread pool would. Everything is deterministic per
 * thread, so a recording and a replay see the same sequence; with several threads
 * only the interleaving differs. Prints a checksum so nothing is optimised away.
 *
 * Each block is written in full and read back, as a program that fills its records
 * does. With CHURN_TOUCH=BYTES only its first BYTES bytes are, so that the allocator,
 * not memset, is what the run spends its time in. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RING_NODE  4096
#define RING_BUF   1024
#define RING_REC   16384
#define TABLE_LONG 65536

/* How many bytes of each block are written and read back; 0 for all of them. */
static size_t touch_bytes;

struct churn_state {
	uint64_t rng;
	uint64_t ops;
	uint64_t checksum;
	void *node[RING_NODE];
	void *buf[RING_BUF];
	void *rec[RING_REC];
	void *table[TABLE_LONG];
};

/* xorshift64*: fixed seeds make every run allocate the same sizes in the same order. */
static uint64_t next_random(struct churn_state *st)
{
	st->rng ^= st->rng >> 12;
	st->rng ^= st->rng << 25;
	st->rng ^= st->rng >> 27;
	return st->rng * 0x2545F4914F6CDD1DULL;
}

static size_t random_size(struct churn_state *st, size_t lo, size_t hi)
{
	return lo + (size_t)(next_random(st) % (hi - lo + 1));
}

/* Each allocating function is its own call site, so noinline keeps them apart. */
static __attribute__((noinline)) char *alloc_tmp(size_t n)
{
	return malloc(n);
}

static __attribute__((noinline)) char *alloc_node(size_t n)
{
	return malloc(n);
}

static __attribute__((noinline)) char *alloc_buf(size_t n)
{
	return malloc(n);
}

static __attribute__((noinline)) char *alloc_rec(size_t n)
{
	return calloc(1, n);
}

static __attribute__((noinline)) char *alloc_long(size_t n)
{
	return malloc(n);
}

static __attribute__((noinline)) char *grow_vec(char *v, size_t n)
{
	return realloc(v, n);
}

static void use(struct churn_state *st, char *p, size_t n)
{
	if (!p) {
		fprintf(stderr, "bench-churn: out of memory\n");
		exit(1);
	}
	size_t w = touch_bytes && touch_bytes < n ? touch_bytes : n;

	memset(p, (int)(n & 0xff), w);
	st->checksum += (uint64_t)(unsigned char)p[w / 2] + n;
}

/* Replaces a random slot of a ring: the old occupant dies, which gives each ring a
 * geometric spread of lifetimes around its size. */
static void replace(struct churn_state *st, void **ring, size_t slots, char *p)
{
	size_t i = (size_t)(next_random(st) % slots);
	free(ring[i]);
	ring[i] = p;
}

static void *churn_run(void *arg)
{
	struct churn_state *st = arg;

	for (uint64_t op = 0; op < st->ops; op++) {
		uint64_t kind = next_random(st) % 100;
		size_t n;
		char *p;

		if (kind < 35) {
			n = random_size(st, 16, 64);
			p = alloc_tmp(n);
			use(st, p, n);
			free(p);
		} else if (kind < 65) {
			n = random_size(st, 32, 128);
			p = alloc_node(n);
			use(st, p, n);
			replace(st, st->node, RING_NODE, p);
		} else if (kind < 80) {
			n = random_size(st, 128, 512);
			p = alloc_buf(n);
			use(st, p, n);
			replace(st, st->buf, RING_BUF, p);
		} else if (kind < 92) {
			n = random_size(st, 16, 256);
			p = alloc_rec(n);
			st->checksum += (uint64_t)(unsigned char)p[n - 1];
			use(st, p, n);
			replace(st, st->rec, RING_REC, p);
		} else if (kind < 97) {
			/* A vector that doubles from 16 up to 512 bytes, then dies. */
			size_t cap = 16;
			char *v = grow_vec(NULL, cap);
			use(st, v, cap);
			while (cap < 512) {
				cap *= 2;
				v = grow_vec(v, cap);
				use(st, v, cap);
			}
			free(v);
		} else {
			n = random_size(st, 16, 512);
			p = alloc_long(n);
			use(st, p, n);
			replace(st, st->table, TABLE_LONG, p);
		}
	}
	for (size_t i = 0; i < RING_NODE; i++)
		free(st->node[i]);
	for (size_t i = 0; i < RING_BUF; i++)
		free(st->buf[i]);
	for (size_t i = 0; i < RING_REC; i++)
		free(st->rec[i]);
	for (size_t i = 0; i < TABLE_LONG; i++)
		free(st->table[i]);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: [CHURN_TOUCH=BYTES] bench-churn OPS [THREADS]\n");
		return 2;
	}
	const char *touch = getenv("CHURN_TOUCH");
	if (touch && *touch) {
		char *end;
		unsigned long long t = strtoull(touch, &end, 10);
		if (*end || !t || t > 4096) {
			fprintf(stderr, "bench-churn: CHURN_TOUCH must be in 1..4096\n");
			return 2;
		}
		touch_bytes = (size_t)t;
	}
	uint64_t ops = strtoull(argv[1], NULL, 10);
	long threads = argc == 3 ? strtol(argv[2], NULL, 10) : 1;
	if (!ops || threads < 1 || threads > 64) {
		fprintf(stderr, "bench-churn: OPS must be > 0 and THREADS in 1..64\n");
		return 2;
	}

	/* The per-thread state is large (the rings); it is static-sized and calloc'ed
	 * once, outside the measured churn pattern. */
	struct churn_state *st = calloc((size_t)threads, sizeof(*st));
	pthread_t tid[64];
	if (!st)
		return 1;
	for (long t = 0; t < threads; t++) {
		st[t].rng = 0x9E3779B97F4A7C15ULL * (uint64_t)(t + 1);
		st[t].ops = ops;
	}
	if (threads == 1) {
		churn_run(&st[0]);
	} else {
		for (long t = 0; t < threads; t++)
			if (pthread_create(&tid[t], NULL, churn_run, &st[t]) != 0) {
				fprintf(stderr, "bench-churn: cannot start a thread\n");
				return 1;
			}
		for (long t = 0; t < threads; t++)
			pthread_join(tid[t], NULL);
	}
	uint64_t sum = 0;
	for (long t = 0; t < threads; t++)
		sum += st[t].checksum;
	printf("churn ops=%" PRIu64 " threads=%ld", ops, threads);
	if (touch_bytes)
		printf(" touch=%zu", touch_bytes);
	printf(" checksum=%" PRIu64 "\n", sum);
	free(st);
	return 0;
}
