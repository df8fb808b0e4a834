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

/* True in a replayed process without an image (replay_has_image): every call
 * goes to libc, and allocations are only counted. */
static inline bool route_without_image(void)
{
	return preload_mode_now() == PRELOAD_REPLAY && !replay_has_image;
}

/* True if this allocation of size bytes goes to libc, counted: a program the
 * recording did not run, in a replayed command, paid the whole router for each
 * call (an allocation-bound churn took 1.25x its time on libc alone). A size no
 * allocator can give is not counted, as in route_alloc. */
static inline bool route_counted_to_libc(size_t size)
{
	if (!route_without_image())
		return false;
	if (size <= PTRDIFF_MAX)
		replay_count_to_libc();
	return true;
}

/* Free and realloc of a block that is not the current arena's, straight to libc
 * (route_passthrough) unless it is in an arena retired after fork (arena.h). Out
 * of line: in the shims, a tail call, as to libc. */
void route_free_not_arena(void *p);
void *route_realloc_not_arena(void *p, size_t size);

void *route_alloc(enum alloc_kind kind, size_t align, size_t size);
void route_free(void *p);
void *route_realloc(void *p, size_t size);
size_t route_usable_size(void *p);
