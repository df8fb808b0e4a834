/* Makes exactly N calls each of malloc, calloc and realloc, and 2N of free, all
 * from one function other than main, so that a test can check what counts the
 * allocation calls from outside the process (scripts/bench/callgrind_calls.py).
 * usage: alloc_calls N; prints the sum of some bytes it wrote. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static __attribute__((noinline)) unsigned long work(long n)
{
	unsigned long sum = 0;

	for (long i = 0; i < n; i++) {
		char *a = malloc(16 + (size_t)(i % 64));
		char *b = calloc(1, 24);
		if (!a || !b)
			exit(1);
		memset(a, 1, 16);
		char *c = realloc(a, 200); /* a realloc of NULL would be compiled as malloc */
		if (!c)
			exit(1);
		c[199] = 3;
		b[0] = 2;
		sum += (unsigned long)(c[15] + b[0] + b[23] + c[199]);
		free(c);
		free(b);
	}
	return sum;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: alloc_calls N\n");
		return 2;
	}
	printf("%lu\n", work(atol(argv[1])));
	return 0;
}
