/* A table of blocks of many sizes that all stay alive to the end: one call
 * site, BLOCKS blocks of 100 to 100 + SPREAD - 1 bytes in a scattered order,
 * each written at both ends and checked before it is freed. Folded into pools
 * of many slot sizes, such a site once used up its chunks at about 100,000
 * slots, and the rest of its blocks went unplanned.
 * usage: pile_sizes BLOCKS SPREAD; prints a checksum, exits 1 on a block
 * found overwritten. */
#include <stdio.h>
#include <stdlib.h>

static __attribute__((noinline)) unsigned char *block(size_t size)
{
	unsigned char *p = malloc(size);

	if (!p)
		exit(1);
	return p;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: pile_sizes BLOCKS SPREAD\n");
		return 2;
	}
	long n = atol(argv[1]), spread = atol(argv[2]);
	unsigned char **v = malloc((size_t)n * sizeof(*v));
	size_t *sizes = malloc((size_t)n * sizeof(*sizes));
	unsigned long sum = 0;

	if (!v || !sizes || spread < 1)
		return 1;
	for (long i = 0; i < n; i++) {
		sizes[i] = 100 + (size_t)(i * 7919 % spread);
		v[i] = block(sizes[i]);
		v[i][0] = v[i][sizes[i] - 1] = (unsigned char)i;
	}
	for (long i = 0; i < n; i++) {
		if (v[i][0] != (unsigned char)i || v[i][sizes[i] - 1] != (unsigned char)i)
			return 1;
		sum += v[i][0];
		free(v[i]);
	}
	free(sizes);
	free(v);
	printf("%lu\n", sum);
	return 0;
}
