/* The reentrancy guard. While it is set on a thread, every allocation that thread
 * makes goes straight to libc: this is how memplan's own allocations (the unwinder's,
 * uthash, the recording) stay out of the recording and out of the arena.
 * initial-exec TLS: reading it never allocates and never calls __tls_get_addr. */
#pragma once

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>

extern __thread int guard_depth __attribute__((tls_model("initial-exec")));

/* Work waiting for a thread to leave memplan's code, in one word that leaving
 * checks with one load:
 * - bits 0-7: a signal that would end the process (SIGTERM, SIGINT...) and
 *   arrived while a thread was inside memplan, where the plan cannot be
 *   written (the tables may be half updated): its handler only notes it here,
 *   and the first thread to leave memplan's code finishes the plan and raises
 *   it again (guard_run_deferred, init.c). 0: none.
 * - bits 8 and up: how many threads hold signals for the program's handlers
 *   until they leave memplan's code (program_handlers.h). */
#define GUARD_PENDING_SIGNAL 0xffu
#define GUARD_PENDING_HELD_THREAD 0x100u
extern _Atomic unsigned guard_pending;
__attribute__((noinline, cold)) void guard_run_deferred(void);

static inline bool guard_active(void)
{
	return guard_depth != 0;
}

/* The guard must be in memory while the code between guard_enter and
 * guard_leave runs. glibc declares most of its functions leaf (they call
 * nothing of the caller's), malloc-calling ones too, so around a call of one
 * gcc would drop the increment and its decrement as never read (it did,
 * around pthread_getattr_np), and the allocations made inside would be taken
 * for the program's. An empty asm that reads and writes the guard keeps both;
 * unlike volatile, it lets gcc update it in one instruction. */
static inline void guard_enter(void)
{
	guard_depth++;
	__asm__ volatile("" : "+m"(guard_depth));
}

static inline void guard_leave(void)
{
	__asm__ volatile("" : "+m"(guard_depth));
	if (--guard_depth == 0 &&
	    __builtin_expect(atomic_load_explicit(&guard_pending, memory_order_relaxed) != 0, 0))
		guard_run_deferred();
}
