/* The exported malloc family: argument checks as glibc does them, then either
 * straight to libc or to the router. Nothing else lives here. */
#include <errno.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "arena.h"
#include "callsite.h"
#include "next_alloc.h"
#include "pool_slots.h"
#include "real_libc.h"
#include "replay.h"
#include "route.h"

#define MEMPLAN_EXPORT __attribute__((visibility("default")))

static size_t page_bytes(void)
{
	static size_t cached;

	if (!cached)
		cached = (size_t)sysconf(_SC_PAGESIZE);
	return cached;
}

static int is_power_of_two(size_t v)
{
	return v && !(v & (v - 1));
}

/* The call into memplan from a shim that marked its caller (CALLSITE_MARK):
 * never a tail call, which would free the shim's frame for the callee's own
 * use while replay still reads it (the caller's frame pointer, saved there).
 * A thread function that allocates directly, one frame under memplan's
 * start_named_thread, once walked through a stale value there and missed
 * every allocation. */
#define MARKED_CALL(call)                                                                          \
	({                                                                                         \
		void *marked_result = (call);                                                      \
		__asm__ volatile("" : "+r"(marked_result));                                        \
		marked_result;                                                                     \
	})

/* The exported function's caller, as replay's express path takes it. Macros,
 * as CALLSITE_MARK: they must see the exported function's caller. */
#define CALLER_RETURN_ADDRESS ((uintptr_t)__builtin_return_address(0))
#define CALLER_FRAME	      ((uintptr_t)__builtin_frame_address(0))

MEMPLAN_EXPORT void *malloc(size_t size)
{
	void *p;

	switch (route_way()) {
	case ROUTE_LIBC:
		return next_malloc(size);
	case ROUTE_LIBC_COUNTED:
		route_count_to_libc(size);
		return next_malloc(size);
	case ROUTE_REPLAY:
		if ((p = replay_express_malloc(size, CALLER_RETURN_ADDRESS, CALLER_FRAME)))
			return p;
		break;
	case ROUTE_ROUTER:
		break;
	}
	CALLSITE_MARK();
	return MARKED_CALL(route_alloc(ALLOC_MALLOC, 1, size));
}

/* An arena block, in any mode, straight to the arena's check. Under the guard
 * all the same: a signal handler that allocates while the release is half done
 * must go to libc, not claim in the arena (arena.h, point 5). Out of line, and
 * reached by a jump: free's path to libc then saves no registers (it took 24
 * instructions a call, where glibc's own free takes 17). */
static __attribute__((noinline)) void free_arena_block(void *p)
{
	guard_enter();
	bool released = pool_slots_arena_free(p);
	guard_leave();
	if (!released)
		arena_bad_pointer("free", p);
}

MEMPLAN_EXPORT void free(void *p)
{
	if (!p)
		return;
	if (arena_owns(p))
		free_arena_block(p);
	else if (route_way() <= ROUTE_LIBC_COUNTED)
		route_free_not_arena(p);
	else
		route_free(p);
}

MEMPLAN_EXPORT void *calloc(size_t n, size_t size)
{
	const enum route_way way = route_way();
	size_t total;
	void *p;

	if (way == ROUTE_LIBC)
		return next_calloc(n, size);
	if (__builtin_mul_overflow(n, size, &total)) {
		errno = ENOMEM;
		return NULL;
	}
	switch (way) {
	case ROUTE_LIBC_COUNTED:
		route_count_to_libc(total);
		return next_calloc(n, size);
	case ROUTE_REPLAY:
		if ((p = replay_express_calloc(total, CALLER_RETURN_ADDRESS, CALLER_FRAME)))
			return p;
		break;
	default:
		break;
	}
	CALLSITE_MARK();
	return MARKED_CALL(route_alloc(ALLOC_CALLOC, 1, total));
}

/* realloc and reallocarray, from the exported function whose return address and
 * frame these are (REALLOC passes them, as ALIGNED below). */
static inline __attribute__((always_inline)) void *
realloc_from(void *p, size_t size, uintptr_t return_address, uintptr_t frame)
{
	const enum route_way way = route_way();
	void *q;

	if (way == ROUTE_LIBC && !arena_owns(p))
		return route_realloc_not_arena(p, size);
	/* realloc(p, 0) frees: SIZE_MAX, not counted. A block of an arena
	 * retired at fork goes the whole way, which counts it. */
	if (way == ROUTE_LIBC_COUNTED && !arena_owns(p) && !arena_retired_owns(p)) {
		route_count_to_libc(p && !size ? SIZE_MAX : size);
		return next_realloc(p, size);
	}
	if (way == ROUTE_REPLAY) {
		if (!p && (q = replay_express_malloc(size, return_address, frame)))
			return q;
		if (p && size && arena_owns(p) &&
		    (q = replay_express_realloc(p, size, return_address, frame)))
			return q;
	}
	callsite_mark(return_address, frame);
	return MARKED_CALL(route_realloc(p, size));
}

#define REALLOC(p, size)                                                                           \
	realloc_from((p), (size), (uintptr_t)__builtin_return_address(0),                          \
		     (uintptr_t)__builtin_frame_address(0))

MEMPLAN_EXPORT void *realloc(void *p, size_t size)
{
	return REALLOC(p, size);
}

MEMPLAN_EXPORT void *reallocarray(void *p, size_t n, size_t size)
{
	size_t total;

	if (__builtin_mul_overflow(n, size, &total)) {
		errno = ENOMEM;
		return NULL;
	}
	return REALLOC(p, total);
}

/* The aligned allocations, from the exported function whose return address and
 * frame these are (ALIGNED passes them: it must see that function's caller, as
 * CALLSITE_MARK does). */
static inline __attribute__((always_inline)) void *
aligned_from(size_t align, size_t size, uintptr_t return_address, uintptr_t frame)
{
	void *p;

	switch (route_way()) {
	case ROUTE_LIBC:
		return next_memalign(align, size);
	case ROUTE_LIBC_COUNTED:
		route_count_to_libc(size);
		return next_memalign(align, size);
	case ROUTE_REPLAY:
		if ((p = replay_express_aligned(size, align, return_address, frame)))
			return p;
		break;
	case ROUTE_ROUTER:
		break;
	}
	callsite_mark(return_address, frame);
	return MARKED_CALL(route_alloc(ALLOC_MEMALIGN, align, size));
}

#define ALIGNED(align, size)                                                                       \
	aligned_from((align), (size), (uintptr_t)__builtin_return_address(0),                      \
		     (uintptr_t)__builtin_frame_address(0))

MEMPLAN_EXPORT int posix_memalign(void **out, size_t align, size_t size)
{
	void *p;

	if (align % sizeof(void *) || !is_power_of_two(align))
		return EINVAL;
	p = ALIGNED(align, size);
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

MEMPLAN_EXPORT void *aligned_alloc(size_t align, size_t size)
{
	/* What libc makes of an alignment that is no power of two depends on its
	 * version (glibc up to 2.37 takes it as memalign does, later ones refuse
	 * it): such a request is libc's to answer, and not planned. */
	if (!is_power_of_two(align))
		return real_libc()->aligned_alloc(align, size);
	return ALIGNED(align, size);
}

MEMPLAN_EXPORT void *memalign(size_t align, size_t size)
{
	/* glibc rounds a non-power-of-two alignment up to the next power of two. */
	if (!is_power_of_two(align)) {
		size_t a = 1;
		while (a < align && a)
			a <<= 1;
		if (!a) {
			errno = EINVAL;
			return NULL;
		}
		align = a;
	}
	return ALIGNED(align, size);
}

MEMPLAN_EXPORT void *valloc(size_t size)
{
	return ALIGNED(page_bytes(), size);
}

MEMPLAN_EXPORT void *pvalloc(size_t size)
{
	size_t page = page_bytes(), rounded;

	if (__builtin_add_overflow(size, page - 1, &rounded)) {
		errno = ENOMEM;
		return NULL;
	}
	rounded &= ~(page - 1);
	return ALIGNED(page, rounded ? rounded : page);
}

MEMPLAN_EXPORT size_t malloc_usable_size(void *p)
{
	return route_usable_size(p);
}
