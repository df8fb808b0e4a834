/* The allocator after memplan's, see next_alloc.h. */
#define _GNU_SOURCE
#include "next_alloc.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/auxv.h>

_Atomic int next_alloc_kind = NEXT_ALLOC_UNKNOWN;

/* The next allocator's functions, once next_alloc_kind is NEXT_ALLOC_OTHER. */
static struct {
	void *(*malloc)(size_t size);
	void *(*calloc)(size_t n, size_t size);
	void *(*realloc)(void *p, size_t size);
	void (*free)(void *p);
	int (*posix_memalign)(void **out, size_t align, size_t size);
} next;

static pthread_once_t next_once = PTHREAD_ONCE_INIT;
/* Set while this thread looks the allocator up: dlsym may allocate (for an
 * error message), and that allocation cannot wait for the lookup. */
static __thread bool looking_up;

/* Blocks glibc gave during the lookup, so that they go back to glibc should the
 * next allocator be another: dlsym allocates nothing when it finds the name, so
 * this stays empty in practice. Filled by the one thread that looks up. */
#define EARLY_BLOCKS 16
static struct {
	_Atomic uintptr_t p;
	size_t size;
} early[EARLY_BLOCKS];
static _Atomic unsigned early_count;

/* The path of the object whose malloc comes before memplan's, if one does. */
static const char *ahead_path;
static bool ahead_is_twin;

/* What another copy of libmemplan.so in the process finds to tell it is one
 * (LD_PRELOAD=copy.so:libmemplan.so, or a user's LD_PRELOAD that holds memplan
 * already, before memplan's CLI adds its own): each took the other for the
 * next allocator, and handed every call back and forth for good. */
__attribute__((visibility("default"))) const char memplan_preload_marker[] = "memplan";

/* Whether p lies in the object that holds q. */
static bool same_object(const void *p, const void *q)
{
	Dl_info at, other;

	return p && q && dladdr(p, &at) && dladdr(q, &other) && at.dli_fbase == other.dli_fbase;
}

/* Whether p lies in libmemplan.so. (Within it, &malloc is the definition the
 * program calls, whichever object that is: objects compare, not addresses.) */
static bool ours(void *p)
{
	return same_object(p, (void *)ours);
}

/* Whether malloc's first definition, first, is that of an object preloaded
 * before memplan. Not if it lies in the program itself: a program linked
 * without -pie that takes malloc's address (node) has its PLT entry stand for
 * malloc everywhere, and that entry leads to memplan's. */
static bool allocator_ahead(void *first)
{
	return first && !ours(first) && !same_object(first, (void *)getauxval(AT_ENTRY));
}

/* The program's definition of name: the first one in the global scope if an
 * allocator comes before memplan's (ahead), else the next one after it. */
static void *program_symbol(const char *name, bool ahead)
{
	void *p = ahead ? dlsym(RTLD_DEFAULT, name) : NULL;

	return p && !ours(p) ? p : dlsym(RTLD_NEXT, name);
}

static void look_up(void)
{
	/* Another allocator first in LD_PRELOAD takes the program's calls of
	 * malloc itself; those of memplan's it does not define (reallocarray,
	 * pvalloc) must go to it too, not to the one after memplan, or glibc
	 * would free jemalloc's blocks. */
	void *first = dlsym(RTLD_DEFAULT, "malloc");
	const bool ahead = allocator_ahead(first);
	Dl_info info;
	if (ahead && dladdr(first, &info))
		ahead_path = info.dli_fname;
	/* Another memplan before this one takes every call and stays the one
	 * that serves; one after it must not be handed them: both go to glibc. */
	void *first_marker = dlsym(RTLD_DEFAULT, "memplan_preload_marker");
	ahead_is_twin = ahead && first_marker && !ours(first_marker);
	const bool twin = ahead_is_twin || dlsym(RTLD_NEXT, "memplan_preload_marker");
	void *m = twin ? NULL : program_symbol("malloc", ahead);
	bool other = m && m != (void *)__libc_malloc;

	/* The rest only for another allocator: in nearly every program two
	 * lookups (each walks the loaded objects' symbol tables) are all a
	 * process pays. */
	if (other) {
		next.malloc = m;
		next.calloc = program_symbol("calloc", ahead);
		next.realloc = program_symbol("realloc", ahead);
		next.free = program_symbol("free", ahead);
		next.posix_memalign = program_symbol("posix_memalign", ahead);
		/* glibc's own are found where nothing else defines them, so none is
		 * missing; should one be, glibc is the one allocator left to trust. */
		other = next.calloc && next.realloc && next.free && next.posix_memalign;
	}
	atomic_store_explicit(&next_alloc_kind, other ? NEXT_ALLOC_OTHER : NEXT_ALLOC_GLIBC,
			      memory_order_release);
}

enum whose { WHOSE_GLIBC, WHOSE_EARLY, WHOSE_OTHER };

/* Who serves a call now: glibc, glibc during the lookup, or the other one. */
static enum whose whose(void)
{
	int kind = atomic_load_explicit(&next_alloc_kind, memory_order_acquire);

	if (kind == NEXT_ALLOC_UNKNOWN) {
		if (looking_up)
			return WHOSE_EARLY;
		looking_up = true;
		pthread_once(&next_once, look_up);
		looking_up = false;
		kind = atomic_load_explicit(&next_alloc_kind, memory_order_acquire);
	}
	return kind == NEXT_ALLOC_OTHER ? WHOSE_OTHER : WHOSE_GLIBC;
}

void next_alloc_find(void)
{
	(void)whose();
}

bool next_alloc_ahead_is_memplan(void)
{
	return next_alloc_ahead() && ahead_is_twin;
}

const char *next_alloc_ahead(void)
{
	return atomic_load_explicit(&next_alloc_kind, memory_order_acquire) == NEXT_ALLOC_UNKNOWN
		   ? NULL
		   : ahead_path;
}

static void *note_early(void *p, size_t size)
{
	unsigned i = atomic_load_explicit(&early_count, memory_order_relaxed);

	if (p && i < EARLY_BLOCKS) {
		early[i].size = size;
		atomic_store_explicit(&early[i].p, (uintptr_t)p, memory_order_relaxed);
		atomic_store_explicit(&early_count, i + 1, memory_order_release);
	}
	return p;
}

/* The index of the early block p, or -1. */
static int early_index(const void *p)
{
	unsigned n = atomic_load_explicit(&early_count, memory_order_acquire);

	for (unsigned i = 0; p && i < n; i++)
		if (atomic_load_explicit(&early[i].p, memory_order_relaxed) == (uintptr_t)p)
			return (int)i;
	return -1;
}

/* Forgets early block i if it is still p: whoever does frees it. */
static bool forget_early(int i, const void *p)
{
	uintptr_t expected = (uintptr_t)p;

	return atomic_compare_exchange_strong(&early[i].p, &expected, 0);
}

void *next_alloc_malloc(size_t size)
{
	switch (whose()) {
	case WHOSE_OTHER:
		return next.malloc(size);
	case WHOSE_EARLY:
		return note_early(__libc_malloc(size), size);
	default:
		return __libc_malloc(size);
	}
}

void *next_alloc_calloc(size_t n, size_t size)
{
	switch (whose()) {
	case WHOSE_OTHER:
		return next.calloc(n, size);
	case WHOSE_EARLY: /* the shims pass n == 1 or a product checked already */
		return note_early(__libc_calloc(n, size), n * size);
	default:
		return __libc_calloc(n, size);
	}
}

void *next_alloc_memalign(size_t align, size_t size)
{
	void *p;

	switch (whose()) {
	case WHOSE_OTHER:
		/* posix_memalign, which every allocator has, wants a multiple of a
		 * pointer's size. */
		if (align < sizeof(void *))
			align = sizeof(void *);
		return next.posix_memalign(&p, align, size) ? NULL : p;
	case WHOSE_EARLY:
		return note_early(__libc_memalign(align, size), size);
	default:
		return __libc_memalign(align, size);
	}
}

void next_alloc_free(void *p)
{
	int i;

	if (whose() != WHOSE_OTHER)
		__libc_free(p);
	else if ((i = early_index(p)) >= 0) {
		if (forget_early(i, p))
			__libc_free(p);
	} else
		next.free(p);
}

void *next_alloc_realloc(void *p, size_t size)
{
	int i = early_index(p);
	void *q;

	switch (whose()) {
	case WHOSE_OTHER:
		if (i < 0)
			return next.realloc(p, size);
		/* A block of glibc's moves to the other allocator. */
		if (!(q = next.malloc(size)))
			return NULL; /* p stays valid, and early */
		memcpy(q, p, early[i].size < size ? early[i].size : size);
		if (forget_early(i, p))
			__libc_free(p);
		return q;
	case WHOSE_EARLY:
		q = __libc_realloc(p, size);
		if (q && i >= 0 && forget_early(i, p))
			note_early(q, size);
		return q;
	default:
		return __libc_realloc(p, size);
	}
}

size_t next_alloc_usable_size(void *p)
{
	int i = early_index(p);

	return i >= 0 ? early[i].size : real_libc()->malloc_usable_size(p);
}
