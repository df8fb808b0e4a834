/* The program's own signal handlers, run outside memplan's code. See
 * program_handlers.h. */
#define _GNU_SOURCE
#include "program_handlers.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#include "big_bss.h"
#include "guard.h"
#include "real_libc.h"
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
} programs[KERNEL_SIGNALS + 1] BIG_BSS;

/* The process whose table this is: a vfork child shares its parent's memory
 * until it execs, and must not change the parent's table. 0: not started. */
static atomic_int table_owner;

static bool valid(int sig)
{
	return sig > 0 && sig <= KERNEL_SIGNALS;
}

/* The signals the program set a disposition of before memplan started: bit
 * sig - 1. */
static _Atomic uint64_t set_before_start;

void program_handlers_note(int sig, const struct sigaction *act)
{
	if (act && valid(sig) && !atomic_load_explicit(&table_owner, memory_order_relaxed))
		atomic_fetch_or(&set_before_start, UINT64_C(1) << (sig - 1));
}

void program_handlers_start(void)
{
	atomic_store(&table_owner, getpid()); /* notes end here */
	uint64_t set = atomic_load(&set_before_start);

	/* Handlers set before memplan started, by the initialisers of libraries
	 * the loader ran first, go behind the trampoline too. Only those need
	 * asking for: exec leaves no handler in place, and the shims saw every
	 * one set since. Asking for all 62 signals took 62 system calls in
	 * every process started, a third of what replay adds to a short one. */
	for (; set; set &= set - 1) {
		const int sig = __builtin_ctzll(set) + 1;
		struct sigaction now, wrapped;

		if (sig == SIGKILL || sig == SIGSTOP || real_libc()->sigaction(sig, NULL, &now) < 0 ||
		    !program_handlers_want(sig, &now))
			continue;
		program_handlers_wrap(sig, &now, &wrapped);
		if (real_libc()->sigaction(sig, &wrapped, NULL) == 0)
			program_handlers_set_wrapped(sig, true);
	}
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

/* Signals taken on this thread inside memplan's code, with what they were
 * sent, until it leaves. Two different signals at once are already rare;
 * a third runs at once. */
#define HELD_SLOTS 2
static __thread struct held_signal {
	int sig; /* 0: free */
	siginfo_t info;
} held[HELD_SLOTS] __attribute__((tls_model("initial-exec")));

/* Keeps the signal on this thread until it leaves memplan's code; further
 * ones of the same signal wait in the kernel meanwhile. Returns false if no
 * slot is free: the handler then runs now. */
static bool hold(int sig, const siginfo_t *info, ucontext_t *context)
{
	const int saved_errno = errno;
	sigset_t all, before;
	bool kept = false;

	/* Another signal's trampoline must not take the same slot. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &before);
	for (int i = 0; i < HELD_SLOTS && !kept; i++) {
		if (held[i].sig)
			continue;
		held[i].info = *info;
		held[i].sig = sig;
		kept = true;
	}
	if (kept) {
		/* The mask the thread returns to, until the release. */
		sigaddset(&context->uc_sigmask, sig);
		if (!guard_held_signals)
			atomic_fetch_add(&guard_pending, GUARD_PENDING_HELD_THREAD);
		guard_held_signals |= 1ull << (sig - 1);
	}
	pthread_sigmask(SIG_SETMASK, &before, NULL);
	errno = saved_errno;
	return kept;
}

/* Calls the program's handler for sig as the kernel would. */
static void run(int sig, siginfo_t *info, void *context)
{
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

static void trampoline(int sig, siginfo_t *info, void *context)
{
	if (guard_active() && !raised_by_instruction(sig, info) && hold(sig, info, context))
		return;
	run(sig, info, context);
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

void program_handlers_unwrap(int sig, void (*disposition)(int))
{
	if (!valid(sig))
		return;
	/* A signal held meanwhile gets the disposition it finds as it is
	 * released, as a pending one would. */
	atomic_store(&programs[sig].handler, (uintptr_t)disposition);
	atomic_store(&programs[sig].wrapped, false);
}

uint64_t program_handlers_after_fork_child(void)
{
	const uint64_t dropped = guard_held_signals;

	if (atomic_load(&table_owner))
		atomic_store(&table_owner, getpid());
	/* Signals the forking thread held were sent to the parent, which
	 * handles them; a child inherits no pending signal. */
	for (int i = 0; i < HELD_SLOTS; i++)
		held[i].sig = 0;
	guard_held_signals = 0;
	return dropped;
}

void program_handlers_release(void)
{
	const int saved_errno = errno;
	struct held_signal now[HELD_SLOTS];
	sigset_t all, before, after;
	int n = 0;

	/* Taken with every signal blocked, so that no trampoline adds to them
	 * meanwhile; the held ones stay blocked while their handlers run. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &before);
	for (int i = 0; i < HELD_SLOTS; i++) {
		if (held[i].sig)
			now[n++] = held[i];
		held[i].sig = 0;
	}
	after = before;
	for (int sig = 1; sig <= KERNEL_SIGNALS; sig++)
		if (guard_held_signals & (1ull << (sig - 1)))
			sigdelset(&after, sig);
	guard_held_signals = 0;
	atomic_fetch_sub(&guard_pending, GUARD_PENDING_HELD_THREAD);
	for (int i = 0; i < n; i++) {
		int sig = now[i].sig;
		sigset_t during = before;
		ucontext_t context;

		/* Blocked during the handler as the kernel would: its mask, and
		 * the signal itself unless SA_NODEFER. */
		sigorset(&during, &during, &programs[sig].mask);
		if (!(atomic_load(&programs[sig].flags) & SA_NODEFER))
			sigaddset(&during, sig);
		pthread_sigmask(SIG_SETMASK, &during, NULL);
		getcontext(&context);
		errno = saved_errno;
		run(sig, &now[i].info, &context);
	}
	/* Further ones that waited in the kernel come now. */
	pthread_sigmask(SIG_SETMASK, &after, NULL);
	errno = saved_errno;
}
