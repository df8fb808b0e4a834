/* 64 call sites in 64 small functions of the same code, laid out one after
 * the other: their return addresses differ by the same stride (16 bytes here),
 * as do those of the template instances or wrappers of a real program. A
 * hash of the call origin that keeps such a progression regular crowds them
 * into a few sets of the per-thread cache of call sites, where they evict
 * each other at every call. usage: strided_sites ROUNDS (each round allocates
 * once from every site, into a random slot of a pool, freeing what was there);
 * prints a checksum. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SITE(n)                                                                                    \
	static __attribute__((noinline)) void *site_##n(size_t bytes)                             \
	{                                                                                          \
		void *p = malloc(bytes);                                                           \
		__asm__ volatile("" ::: "memory"); /* no tail call: the site is this function */ \
		return p;                                                                          \
	}
#define SITE4(n) SITE(n##0) SITE(n##1) SITE(n##2) SITE(n##3)
#define SITE16(n) SITE4(n##0) SITE4(n##1) SITE4(n##2) SITE4(n##3)
SITE16(1) SITE16(2) SITE16(3) SITE16(4)

#define NAME(n) site_##n,
#define NAME4(n) NAME(n##0) NAME(n##1) NAME(n##2) NAME(n##3)
#define NAME16(n) NAME4(n##0) NAME4(n##1) NAME4(n##2) NAME4(n##3)
static void *(*const sites[])(size_t) = {NAME16(1) NAME16(2) NAME16(3) NAME16(4)};

#define SITES (sizeof(sites) / sizeof(sites[0]))
#define POOL  64

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 200;
	unsigned char *pool[POOL] = {0};
	uint32_t x = 2463534242u;
	unsigned long sum = 0;

	for (int r = 0; r < rounds; r++)
		for (unsigned i = 0; i < SITES; i++) {
			x ^= x << 13;
			x ^= x >> 17;
			x ^= x << 5;
			unsigned k = x % POOL;
			free(pool[k]);
			pool[k] = sites[i](16 + 8 * i + (unsigned)r % 5);
			if (!pool[k])
				return 1;
			memset(pool[k], (int)i, 16);
			sum += pool[k][(i + (unsigned)r) % 16] + i;
		}
	for (unsigned k = 0; k < POOL; k++)
		free(pool[k]);
	printf("%zu sites, %d rounds, checksum %lu\n", SITES, rounds, sum);
	return 0;
}
