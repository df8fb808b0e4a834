/* Routing of every allocation call: by address first (an arena pointer is always
 * the arena's, whatever the mode), then by mode (record, replay, or straight to
 * libc). The shims call these only when the fast checks in route_passthrough()
 * say there is work to do. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "guard.h"
#include "init.h"

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

/* Free and realloc of a block that is not the current arena's, straight to libc
 * (route_passthrough) unless it is in an arena retired after fork (arena.h). Out
 * of line: in the shims, a tail call, as to libc. */
void route_free_not_arena(void *p);
void *route_realloc_not_arena(void *p, size_t size);

void *route_alloc(enum alloc_kind kind, size_t align, size_t size);
void route_free(void *p);
void *route_realloc(void *p, size_t size);
size_t route_usable_size(void *p);
