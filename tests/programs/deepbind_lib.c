/* The library deepbind_host opens with RTLD_DEEPBIND: its allocation calls,
 * through the PLT and through pointers in its data, bind to libc first. */
#include <malloc.h>
#include <stdlib.h>

#include "deepbind_api.h"

static void lib_free(void *p)
{
	free(p);
}

static void *lib_malloc(size_t n)
{
	return malloc(n);
}

static void *lib_calloc(size_t n, size_t size)
{
	return calloc(n, size);
}

static void *lib_realloc(void *p, size_t n)
{
	return realloc(p, n);
}

static void *lib_aligned_alloc(size_t align, size_t n)
{
	return aligned_alloc(align, n);
}

static size_t lib_usable(void *p)
{
	return malloc_usable_size(p);
}

/* free itself, as a pointer in the library's data: a relocation of its own,
 * not a call through the PLT. */
__attribute__((visibility("default"))) const struct deepbind_api deepbind_api = {
    lib_free, lib_malloc, lib_calloc, lib_realloc, lib_aligned_alloc, lib_usable, free,
};
