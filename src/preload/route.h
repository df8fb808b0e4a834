/* Routing of every allocation call: by address first (an arena pointer is always
 * the arena's, whatever the mode), then by mode (record, replay, or straight to
 * libc). The shims call these only when the fast checks in route_passthrough()
 * say there is work to do. */
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

/* True if this call can go straight to libc: memplan is off, or this thread is
 * inside memplan's own code. */
static inline bool route_passthrough(void)
{
	return preload_mode_now() == PRELOAD_OFF || guard_active();
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
 * (route_passthrough) unless it is in an arena retired after fork (arena.h). Out
 * of line (noinline, or link-time optimisation inlines them): in the shims, a
 * tail call, as to libc, and free saves no registers on its way to an arena
 * block's release (inlined, 6 instructions more a free on the churn replay). */
__attribute__((noinline)) void route_free_not_arena(void *p);
__attribute__((noinline)) void *route_realloc_not_arena(void *p, size_t size);

void *route_alloc(enum alloc_kind kind, size_t align, size_t size);
void route_free(void *p);
void *route_realloc(void *p, size_t size);
size_t route_usable_size(void *p);
