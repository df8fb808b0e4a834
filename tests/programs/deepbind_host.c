/* Opens deepbind_lib.so with RTLD_DEEPBIND, as PHP opens its extensions, and
 * passes blocks across: the library frees, reallocs and measures blocks the
 * program allocated, and the program frees blocks the library allocated (with
 * malloc, calloc, realloc, aligned_alloc, and through function pointers held in
 * the library's data). Bound deeply, the library's calls would reach glibc,
 * which aborts on a block of memplan's arena. Prints a checksum.
 * usage: deepbind_host NAME-OR-PATH lazy|now [ROUNDS]
 * A bare NAME is found along the host's RUNPATH ($ORIGIN); the host also opens
 * the same library without RTLD_DEEPBIND by bare name, which only a dlopen
 * that keeps the caller's RUNPATH finds. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deepbind_api.h"

static const struct deepbind_api *open_api(const char *name, int mode)
{
	void *lib = dlopen(name, mode);
	const struct deepbind_api *api = lib ? dlsym(lib, "deepbind_api") : NULL;

	if (!api) {
		fprintf(stderr, "deepbind_host: %s\n", dlerror());
		exit(1);
	}
	return api;
}

int main(int argc, char **argv)
{
	int rounds = argc > 3 ? atoi(argv[3]) : 2000;
	uint64_t sum = 0;

	if (argc < 3)
		return 2;
	const struct deepbind_api *api =
	    open_api(argv[1], (strcmp(argv[2], "lazy") ? RTLD_NOW : RTLD_LAZY) | RTLD_DEEPBIND);
	for (int i = 0; i < rounds; i++) {
		size_t n = 24 + (size_t)(i * 37) % 400;
		char *p = malloc(n), *q = malloc(n);
		if (!p || !q)
			return 1;
		memset(p, 'a' + i % 26, n);
		memset(q, 'b', n);
		sum += api->usable(p) >= n;
		p = api->realloc(p, 2 * n + 100); /* moved or grown by the library */
		if (!p)
			return 1;
		sum += (unsigned char)p[n - 1];
		api->free(p);
		api->free_by_pointer(q);
		char *r = api->malloc(n), *z = api->calloc(4, n), *a = api->aligned_alloc(64, 128);
		if (!r || !z || !a || (uintptr_t)a % 64)
			return 1;
		sum += (unsigned char)z[3 * n] + malloc_usable_size(r) / n;
		r = realloc(r, 3 * n);
		free(r);
		free(z);
		free(a);
	}
	/* The same library by bare name, bound as usual: found only along the
	 * host's RUNPATH. */
	if (strchr(argv[1], '/'))
		open_api("deepbind_lib.so", RTLD_NOW);
	printf("checksum %llu\n", (unsigned long long)sum);
	return 0;
}
