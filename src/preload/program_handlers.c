/* The program's own signal handlers, run outside memplan's code. See
 * program_handlers.h. */
#define _GNU_SOURCE
#include "program_handlers.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "guard.h"
#include "signal_hook.h"

__thread volatile uint64_t guard_held_signals __attribute__((tls_model("initial-exec")));

/* The kernel's sigset, which rt_sigreturn restores, has 64 signals. */
#define KERNEL_SIGNALS 64

/* The program's handler for each signal. The trampoline reads only the
 * handler and the flags, each in one load. */
static struct program_handler {
	_Atomic uintptr_t handler;
	atomic_int flags;
	sigset_t mask;
	atomic_bool wrapped;
} programs[KERNEL_SIGNALS + 1];

/* The process whose table this is: a vfork child shares its parent's memory
 * until it execs, and must not change the parent's table. 0: not started. */
static atomic_int table_owner;

void program_handlers_start(void)
{
	atomic_store(&table_owner, getpid());
}

void program_handlers_after_fork_child(void)
{
	if (atomic_load(&table_owner))
		atomic_store(&table_owner, getpid());
}

static bool valid(int sig)
{
	return sig > 0 && sig <= KERNEL_SIGNALS;
}

bool program_handlers_wrapped(int sig)
{
	return valid(sig) && atomic_load_explicit(&programs[sig].wrapped, memory_order_relaxed);
}

bool program_handlers_own_table(void)
{
	int owner = atomic_load_explicit(&table_owner, memory_order_relaxed);

	return owner && owner == getpid();
}

bool program_handlers_want(int sig, const struct sigaction *act)
{
	return act && atomic_load_explicit(&table_owner, memory_order_relaxed) && valid(sig) &&
	       sig != SIGKILL && sig != SIGSTOP && act->sa_handler != SIG_DFL &&
	       act->sa_handler != SIG_IGN;
}

/* Raised by the thread's own instruction: returning would run it again. */
static bool raised_by_instruction(int sig, const siginfo_t *info)
{
	switch (sig) {
	case SIGSEGV:
	case SIGBUS:
	case SIGFPE:
	case SIGILL:
	case SIGTRAP:
	case SIGSYS:
		return info->si_code > 0 && info->si_code != SI_KERNEL;
	case SIGABRT:
		return true; /* abort() goes on to end the process if the handler returns */
	default:
		return false;
	}
}

/* Queues the signal to this thread again, blocked until it leaves memplan's
 * code. Returns false if the kernel would not queue it (the queue of
 * real-time signals is full): the handler then runs now. */
static bool hold(int sig, siginfo_t *info, ucontext_t *context)
{
	const int saved_errno = errno;
	sigset_t all, before;
	bool queued;

	/* All blocked while it is held: with SA_NODEFER it would come back at
	 * once, and another signal's trampoline must not count this thread
	 * twice. The mask the thread returns to is the context's. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &before);
	queued = syscall(SYS_rt_tgsigqueueinfo, getpid(), gettid(), sig, info) == 0;
	if (queued) {
		/* The mask the thread returns to: blocked until released. */
		sigaddset(&context->uc_sigmask, sig);
		if (!guard_held_signals)
			atomic_fetch_add(&guard_pending, GUARD_PENDING_HELD_THREAD);
		guard_held_signals |= 1ull << (sig - 1);
	} else {
		pthread_sigmask(SIG_SETMASK, &before, NULL);
	}
	errno = saved_errno;
	return queued;
}

static void trampoline(int sig, siginfo_t *info, void *context)
{
	if (guard_active() && !raised_by_instruction(sig, info) && hold(sig, info, context))
		return;
	uintptr_t handler = atomic_load_explicit(&programs[sig].handler, memory_order_acquire);
	if (atomic_load_explicit(&programs[sig].flags, memory_order_relaxed) & SA_RESETHAND)
		signal_hook_reset_default(sig);
	if (handler == (uintptr_t)SIG_IGN)
		return;
	if (handler == (uintptr_t)SIG_DFL) { /* changed as it arrived */
		signal_hook_reset_default(sig);
		raise(sig);
		return;
	}
	/* The kernel passes all three arguments to every handler on this ABI,
	 * with or without SA_SIGINFO. */
	((void (*)(int, siginfo_t *, void *))handler)(sig, info, context);
}

void program_handlers_wrap(int sig, const struct sigaction *act, struct sigaction *kernel_act)
{
	struct program_handler *p = &programs[sig];

	p->mask = act->sa_mask;
	atomic_store_explicit(&p->flags, act->sa_flags, memory_order_relaxed);
	atomic_store_explicit(&p->handler, (uintptr_t)act->sa_handler, memory_order_release);
	memset(kernel_act, 0, sizeof(*kernel_act));
	kernel_act->sa_sigaction = trampoline;
	kernel_act->sa_mask = act->sa_mask;
	/* SA_RESETHAND is the trampoline's to do: the kernel would reset before
	 * a held signal's second delivery. */
	kernel_act->sa_flags = (act->sa_flags & ~SA_RESETHAND) | SA_SIGINFO;
}

bool program_handlers_is_trampoline(const struct sigaction *act)
{
	return act->sa_sigaction == trampoline;
}

void program_handlers_get(int sig, struct sigaction *act)
{
	const struct program_handler *p = &programs[sig];

	memset(act, 0, sizeof(*act));
	act->sa_handler = (void (*)(int))atomic_load(&p->handler);
	act->sa_flags = atomic_load(&p->flags);
	act->sa_mask = p->mask;
}

void program_handlers_set_wrapped(int sig, bool wrapped)
{
	if (valid(sig))
		atomic_store(&programs[sig].wrapped, wrapped);
}

void program_handlers_release(void)
{
	const int saved_errno = errno;
	uint64_t held = guard_held_signals;
	sigset_t set;

	guard_held_signals = 0;
	atomic_fetch_sub(&guard_pending, GUARD_PENDING_HELD_THREAD);
	sigemptyset(&set);
	for (int sig = 1; sig <= KERNEL_SIGNALS; sig++)
		if (held & (1ull << (sig - 1)))
			sigaddset(&set, sig);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	errno = saved_errno;
}
