/* A loop in a steady state, the shape of a server or a batch job: each turn
 * allocates a record, a buffer of varying size and a few short-lived strings,
 * keeps the last RING records and buffers, and frees the rest. usage:
 * steady_loop TURNS; prints a checksum of every block's contents, and exits 1
 * if a block was found overwritten. The length of the run is an argument, so
 * that a plan recorded on a short run serves a longer one. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RING 64

struct record {
	uint64_t id;
	char *buf;
	size_t len;
};

static uint64_t next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static __attribute__((noinline)) struct record *new_record(uint64_t id)
{
	struct record *r = malloc(sizeof(*r));
	if (r)
		r->id = id;
	return r;
}

static __attribute__((noinline)) char *new_buffer(size_t len)
{
	return malloc(len);
}

static __attribute__((noinline)) char *new_string(const char *text, size_t len)
{
	char *s = malloc(len + 1);
	if (s) {
		memcpy(s, text, len);
		s[len] = '\0';
	}
	return s;
}

static void fill(char *p, size_t n, uint64_t tag)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (char)(tag + i);
}

static int intact(const char *p, size_t n, uint64_t tag)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != (char)(tag + i))
			return 0;
	return 1;
}

int main(int argc, char **argv)
{
	static const char words[] = "alpha beta gamma delta epsilon zeta eta theta iota kappa";
	struct record *ring[RING] = {0};
	uint64_t turns = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000, seed = 7, sum = 0;

	for (uint64_t t = 0; t < turns; t++) {
		struct record *r = new_record(t);
		if (!r)
			return 2;
		r->len = 24 + next(&seed) % 1000;
		r->buf = new_buffer(r->len);
		if (!r->buf)
			return 2;
		fill(r->buf, r->len, r->id);
		for (int k = 0; k < 3; k++) {
			size_t n = 1 + next(&seed) % (sizeof(words) - 1);
			char *s = new_string(words, n);
			if (!s)
				return 2;
			sum += (uint64_t)strlen(s) * (uint64_t)(unsigned char)s[n / 2];
			free(s);
		}
		struct record **slot = &ring[t % RING];
		if (*slot) {
			if (!intact((*slot)->buf, (*slot)->len, (*slot)->id)) {
				fprintf(stderr, "steady_loop: record %llu overwritten\n",
					(unsigned long long)(*slot)->id);
				return 1;
			}
			sum += (*slot)->id * (*slot)->len;
			free((*slot)->buf);
			free(*slot);
		}
		*slot = r;
	}
	for (int k = 0; k < RING; k++)
		if (ring[k]) {
			free(ring[k]->buf);
			free(ring[k]);
		}
	printf("%llu\n", (unsigned long long)sum);
	return 0;
}
