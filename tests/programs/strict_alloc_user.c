/* A program linked with strict_alloc.so, which ends it on any block that is not
 * its own: every allocation call, libc's own (strdup, getline, fopen), sizes
 * asked for (at least what was asked), and a count of rounds from argv[1] so that a replay can run
 * longer than its recording. Prints a checksum of what it computed. */
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 1000;
	uint64_t sum = 0;
	char *keep[64] = {0};

	for (int i = 0; i < rounds; i++) {
		int k = i % 64;
		free(keep[k]);
		keep[k] = malloc(16 + (size_t)(i * 37 % 700));
		memset(keep[k], i & 0xff, 16);
		sum += malloc_usable_size(keep[k]) >= 16;
		char *s = strdup(argv[0]);
		s = realloc(s, 200 + (size_t)(i % 300));
		sum += (unsigned char)s[0];
		void *a = aligned_alloc(64, 64 * (size_t)(1 + i % 8));
		void *b = NULL;
		if (posix_memalign(&b, 256, 100 + (size_t)i % 1000) != 0)
			return 1;
		void *c = memalign(32, 40);
		void *d = valloc(100);
		char *z = calloc(10, 10 + (size_t)(i % 20));
		sum += (unsigned char)z[5] + (malloc_usable_size(a) >= 64 * (size_t)(1 + i % 8)) +
		       ((uintptr_t)b % 256 == 0);
		void *r = reallocarray(NULL, 4, 10);
		free(r);
		free(a);
		free(b);
		free(c);
		free(d);
		free(z);
		free(s);
	}
	FILE *f = fopen(argv[0], "r");
	if (f) {
		char *line = NULL;
		size_t cap = 0;
		if (getline(&line, &cap, f) > 0)
			sum += cap > 0;
		free(line);
		fclose(f);
	}
	for (int k = 0; k < 64; k++)
		free(keep[k]);
	printf("%d rounds, checksum %llu\n", rounds, (unsigned long long)sum);
	return 0;
}
