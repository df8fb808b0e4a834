/* The reentrancy guard. While it is set on a thread, every allocation that thread
 * makes goes straight to libc: this is how memplan's own allocations (libunwind,
 * uthash, the recording) stay out of the recording and out of the arena.
 * initial-exec TLS: reading it never allocates and never calls __tls_get_addr. */
#pragma once

#include <stdbool.h>

extern __thread int guard_depth __attribute__((tls_model("initial-exec")));

static inline bool guard_active(void)
{
	return guard_depth != 0;
}

static inline void guard_enter(void)
{
	guard_depth++;
}

static inline void guard_leave(void)
{
	guard_depth--;
}
