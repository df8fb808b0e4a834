/* Routing of every allocation call: by address first (an arena pointer is always
 * the arena's, whatever the mode), then by mode (record, replay, or straight to
 * libc). The shims call these only when route_way() says there is work to
 * do. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "guard.h"
#include "init.h"
#include "replay.h"

enum alloc_kind {
	ALLOC_MALLOC,
	ALLOC_CALLOC, /* size is n * m, already checked for overflow */
	ALLOC_MEMALIGN,
};

/* Which way a shim sends a call, from the mode read once: straight to libc
 * (memplan is off, or this thread is inside memplan's own code); to libc,
 * counted (a replayed process without an image: route_count_to_libc); to
 * replay's express path first; or to the router. One read of the mode and no
 * branch more for replay's common case: the check for an image, as a second
 * test after the mode's, took 3% more instructions on the churn replay
 * (callgrind). */
enum route_way { ROUTE_LIBC, ROUTE_LIBC_COUNTED, ROUTE_REPLAY, ROUTE_ROUTER };

static inline __attribute__((always_inline)) enum route_way route_way(void)
{
	const enum preload_mode mode = preload_mode_now();

	if (mode == PRELOAD_OFF || guard_active())
		return ROUTE_LIBC;
	if (mode != PRELOAD_REPLAY)
		return ROUTE_ROUTER;
	return replay_has_image ? ROUTE_REPLAY : ROUTE_LIBC_COUNTED;
}

/* Counts an allocation of size bytes that a replayed process without an image
 * (replay_has_image) sends to libc: such a program, one the recording did not
 * run, paid the whole router for each call (an allocation-bound churn took
 * 1.25x its time on libc alone). A size no allocator can give is not counted,
 * as in route_alloc. */
static inline void route_count_to_libc(size_t size)
{
	if (size <= PTRDIFF_MAX)
		replay_count_to_libc();
}

/* Free and realloc of a block that is not the current arena's, straight to libc
 * (ROUTE_LIBC) unless it is in an arena retired after fork (arena.h). Out
 * of line (noinline, or link-time optimisation inlines them): in the shims, a
 * tail call, as to libc, and free saves no registers on its way to an arena
 * block's release (inlined, 6 instructions more a free on the churn replay). */
__attribute__((noinline)) void route_free_not_arena(void *p);
__attribute__((noinline)) void *route_realloc_not_arena(void *p, size_t size);

void *route_alloc(enum alloc_kind kind, size_t align, size_t size);
void route_free(void *p);
void *route_realloc(void *p, size_t size);
size_t route_usable_size(void *p);
