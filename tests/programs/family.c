/* Calls every function of the malloc family and checks what the C library
 * promises: alignment, zeroed calloc memory, realloc keeping contents, usable
 * size at least the request, error returns. Prints one line per check so record,
 * replay and plain runs can be compared byte for byte. Exits 1 on a failure. */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failures;

static void check(int ok, const char *what)
{
	printf("%s %s\n", ok ? "ok" : "FAIL", what);
	failures += !ok;
}

static int aligned(const void *p, size_t a)
{
	return ((uintptr_t)p % a) == 0;
}

int main(int argc, char **argv)
{
	unsigned rounds = argc > 1 ? (unsigned)atoi(argv[1]) : 3;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	for (unsigned r = 0; r < rounds; r++) {
		char *m = malloc(100);
		check(m && aligned(m, 16), "malloc aligned to 16");
		memset(m, 'x', 100);
		check(malloc_usable_size(m) >= 100, "malloc_usable_size >= request");

		unsigned char *c = calloc(50, 20);
		int zero = 1;
		for (int i = 0; c && i < 1000; i++)
			zero &= c[i] == 0;
		check(c && zero, "calloc zeroed");
		memset(c, 0xab, 1000);
		free(c);
		c = calloc(50, 20); /* likely reuses the same bytes */
		zero = 1;
		for (int i = 0; c && i < 1000; i++)
			zero &= c[i] == 0;
		check(c && zero, "calloc zeroed after reuse");
		free(c);

		/* volatile count: gcc would warn that it sees the overflow. volatile
		 * result: clang drops an allocation whose result is only compared
		 * with NULL, and with it the call and its errno. */
		volatile size_t half = SIZE_MAX / 2;
		void *volatile huge;
		errno = 0;
		huge = calloc(half, 3);
		check(huge == NULL && errno == ENOMEM, "calloc overflow");
		errno = 0;
		huge = reallocarray(NULL, half, 3);
		check(huge == NULL && errno == ENOMEM, "reallocarray overflow");

		m = realloc(m, 50);
		int kept = 1;
		for (int i = 0; m && i < 50; i++)
			kept &= m[i] == 'x';
		check(m && kept, "realloc shrink keeps contents");
		m = realloc(m, 100000);
		kept = 1;
		for (int i = 0; m && i < 50; i++)
			kept &= m[i] == 'x';
		check(m && kept, "realloc grow keeps contents");
		m = reallocarray(m, 10, 30);
		check(m != NULL, "reallocarray");
		free(m);

		void *p = NULL;
		check(posix_memalign(&p, 4096, 5000) == 0 && aligned(p, 4096),
		      "posix_memalign 4096");
		free(p);
		check(posix_memalign(&p, 3, 10) == EINVAL, "posix_memalign rejects 3");
		/* One call site asking for more alignment than a plan holds (2 MiB),
		 * then less: the first is never planned, so it must neither come back
		 * less aligned than asked nor use up the site's next entry. */
		for (int i = 0; i < 3; i++) {
			size_t align = i == 0 ? (size_t)8 << 20 : 64;
			p = NULL;
			check(posix_memalign(&p, align, 100) == 0 && aligned(p, align),
			      i == 0 ? "posix_memalign 8 MiB" : "posix_memalign 64 on the same site");
			free(p);
		}
		p = aligned_alloc(256, 512);
		check(p && aligned(p, 256), "aligned_alloc 256");
		free(p);
		p = memalign(64, 100);
		check(p && aligned(p, 64), "memalign 64");
		free(p);
		p = valloc(10);
		check(p && aligned(p, page), "valloc page-aligned");
		free(p);
		p = pvalloc(10);
		check(p && aligned(p, page) && malloc_usable_size(p) >= page,
		      "pvalloc rounds to a page");
		free(p);
		p = malloc(0);
		check(p != NULL, "malloc(0) gives a pointer");
		free(p);
		check(realloc(malloc(8), 0) == NULL, "realloc to 0 frees");
		check(malloc_usable_size(NULL) == 0, "malloc_usable_size(NULL)");
		free(NULL);
	}
	return failures ? 1 : 0;
}
