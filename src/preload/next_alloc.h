/* The allocator the program would have had without memplan, for every block
 * memplan does not serve: glibc's, or one that comes after libmemplan.so in the
 * symbol search order (jemalloc, which bind9's tools, redis-cli and varnish
 * link; tcmalloc; a later LD_PRELOAD), or one before it (an earlier
 * LD_PRELOAD, which takes the program's calls of malloc itself, but not those
 * of the functions only memplan defines). Without this, blocks went to glibc
 * while malloc_usable_size and aligned_alloc went to the program's allocator:
 * named-checkzone, linked with jemalloc, died at its first free under replay.
 *
 * Which one is found once (dlsym(RTLD_NEXT, "malloc"), as any interposer
 * does, after a look at the first definition, dlsym(RTLD_DEFAULT)): at
 * memplan's start-up, or by a call that comes before it (the loader's own).
 * It is glibc's in nearly every program: that case is one predictable branch
 * before the __libc_ call. memplan's own tables stay on glibc (__libc_malloc,
 * real_libc.h): the program never sees them. */
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "real_libc.h"

enum next_alloc_kind { NEXT_ALLOC_UNKNOWN, NEXT_ALLOC_GLIBC, NEXT_ALLOC_OTHER };

extern _Atomic int next_alloc_kind;

/* Finds the next allocator now, if no call has yet: memplan's start-up calls
 * it while the process is still starting, so that the lookup never runs where
 * another thread may hold the loader's lock (in dlopen) and wait for it. */
void next_alloc_find(void);

/* The path of the object whose malloc the program calls if it is not memplan's
 * (another allocator before libmemplan.so in LD_PRELOAD, in the raw form):
 * the program's calls then never reach memplan, which should say so and stay
 * off. NULL if memplan's comes first, or before next_alloc_find. */
const char *next_alloc_ahead(void);

/* Whether what comes before is another copy of memplan's library: it serves,
 * and this one stays off. */
bool next_alloc_ahead_is_memplan(void);

/* The calls below past their common case (next_alloc.c). */
void *next_alloc_malloc(size_t size);
void *next_alloc_calloc(size_t n, size_t size);
void *next_alloc_realloc(void *p, size_t size);
void next_alloc_free(void *p);
void *next_alloc_memalign(size_t align, size_t size);
size_t next_alloc_usable_size(void *p);

static inline bool next_alloc_glibc(void)
{
	return __builtin_expect(atomic_load_explicit(&next_alloc_kind, memory_order_relaxed) ==
					NEXT_ALLOC_GLIBC,
				1);
}

static inline void *next_malloc(size_t size)
{
	return next_alloc_glibc() ? __libc_malloc(size) : next_alloc_malloc(size);
}

static inline void *next_calloc(size_t n, size_t size)
{
	return next_alloc_glibc() ? __libc_calloc(n, size) : next_alloc_calloc(n, size);
}

static inline void *next_realloc(void *p, size_t size)
{
	return next_alloc_glibc() ? __libc_realloc(p, size) : next_alloc_realloc(p, size);
}

static inline void next_free(void *p)
{
	if (next_alloc_glibc())
		__libc_free(p);
	else
		next_alloc_free(p);
}

/* align: a power of two. */
static inline void *next_memalign(size_t align, size_t size)
{
	return next_alloc_glibc() ? __libc_memalign(align, size)
				  : next_alloc_memalign(align, size);
}

/* The usable size of a block that next_malloc and the others gave. */
static inline size_t next_usable_size(void *p)
{
	return next_alloc_glibc() ? real_libc()->malloc_usable_size(p) : next_alloc_usable_size(p);
}
