/* The reentrancy guard. While it is set on a thread, every allocation that thread
 * makes goes straight to libc: this is how memplan's own allocations (the unwinder's,
 * uthash, the recording) stay out of the recording and out of the arena.
 * initial-exec TLS: reading it never allocates and never calls __tls_get_addr. */
#pragma once

#include <signal.h>
#include <stdbool.h>

/* volatile: glibc declares most of its functions leaf (they call nothing of
 * the caller's), malloc-calling ones too; around a call of one, gcc would drop
 * an increment and its decrement as unread (seen around pthread_getattr_np),
 * and the allocations it makes would be taken for the program's. */
extern __thread volatile int guard_depth __attribute__((tls_model("initial-exec")));

/* A signal that would end the process (SIGTERM, SIGINT...) and arrived while a
 * thread was inside memplan, where the plan cannot be written (the tables may
 * be half updated): its handler only notes it here, and the first thread to
 * leave memplan's code finishes the plan and raises it again
 * (guard_run_deferred, init.c). 0: none. */
extern volatile sig_atomic_t guard_deferred_signal;
void guard_run_deferred(void);

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
	if (--guard_depth == 0 && __builtin_expect(guard_deferred_signal != 0, 0))
		guard_run_deferred();
}
