/* A realloc loop that stays in place (96 and 97 bytes, alternately, in one
 * block of 100), then one realloc that moves the block, from the same call
 * site: re() is a real frame (no tail call), so every call has one site. Then
 * 400 blocks filled with a pattern, the big block freed, and the patterns
 * checked: a recording that writes past a site's log corrupts them, or the
 * heap. usage: realloc_in_place N (the number of in-place reallocs). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCKS 400

static __attribute__((noinline)) void *re(void *p, size_t n)
{
	void *q = realloc(p, n);
	asm volatile("" ::: "memory");
	return q;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	unsigned char *blocks[BLOCKS];
	void *p = malloc(100);

	if (!p)
		return 2;
	for (long i = 0; i < n; i++) {
		p = re(p, 96 + (size_t)(i & 1));
		if (!p)
			return 2;
	}
	p = re(p, 100000);
	if (!p)
		return 2;
	for (int b = 0; b < BLOCKS; b++) {
		size_t size = 16 + (size_t)(b * 37 % 500);
		blocks[b] = malloc(size);
		if (!blocks[b])
			return 2;
		memset(blocks[b], b & 0xff, size);
	}
	free(p);
	for (int b = 0; b < BLOCKS; b++) {
		size_t size = 16 + (size_t)(b * 37 % 500);
		for (size_t k = 0; k < size; k++)
			if (blocks[b][k] != (unsigned char)(b & 0xff)) {
				printf("corrupt block %d at %zu\n", b, k);
				return 1;
			}
		free(blocks[b]);
	}
	printf("ok %ld\n", n);
	return 0;
}
