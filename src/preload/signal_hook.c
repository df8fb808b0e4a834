/* memplan's hidden hook on fatal signals, see signal_hook.h. */
#define _GNU_SOURCE
#include "signal_hook.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <sys/syscall.h>

#include "program_handlers.h"
#include "real_libc.h"

#define MEMPLAN_EXPORT __attribute__((visibility("default")))

/* The kernel's signal set: 64 signals. */
#define KERNEL_SIGSET_BYTES 8

/* The signals whose default action ends the process. SIGINT and SIGQUIT too: with
 * the hook hidden, even a program that looks at them (CPython, shells) behaves as
 * if memplan were not there, and a C program stopped by ^C still leaves a plan. */
static const int fatal_signals[] = {SIGINT,  SIGQUIT, SIGSEGV, SIGBUS,	SIGFPE, SIGILL,
				    SIGABRT, SIGTRAP, SIGSYS,  SIGTERM, SIGHUP, SIGPIPE,
				    SIGXCPU, SIGXFSZ, SIGALRM, SIGUSR1, SIGUSR2};

/* Whether memplan's handler is in place for a signal where the program has the
 * default disposition. */
static atomic_bool hooked[NSIG];
/* memplan's handler as installed; no sa_handler until signal_hook_install. */
static struct sigaction hook;

static bool is_fatal(int sig)
{
	for (size_t i = 0; i < sizeof(fatal_signals) / sizeof(fatal_signals[0]); i++)
		if (fatal_signals[i] == sig)
			return true;
	return false;
}

static bool is_hooked(int sig)
{
	return sig > 0 && sig < NSIG && atomic_load_explicit(&hooked[sig], memory_order_relaxed);
}

bool signal_hook_is_hooked(int sig)
{
	return is_hooked(sig);
}

/* The default disposition, as memplan's hook stands in for it. */
static bool is_default(const struct sigaction *act)
{
	return act->sa_handler == SIG_DFL && !(act->sa_flags & SA_SIGINFO);
}

/* Whether act asks for the default disposition of a signal memplan hooks: it then
 * gets memplan's handler, which ends the process as the default would, after
 * writing the plan. (CPython, stopped by ^C, sets SIGINT back to the default and
 * sends it to itself, with no exit handler run.) */
static bool wants_hooked_default(int sig, const struct sigaction *act)
{
	return hook.sa_handler && act && is_default(act) && is_fatal(sig);
}

/* The thread's signal mask, by the system call itself: libc's
 * pthread_sigmask lies in a part of its code no other call at start-up runs,
 * and the kernel maps 64 KiB of code around the page a call faults in (60 KiB
 * more resident in each process of a shell loop). */
static bool mask_signals(int how, const sigset_t *set, sigset_t *old)
{
	return real_libc()->syscall(SYS_rt_sigprocmask, how, (long)set, (long)old,
				    KERNEL_SIGSET_BYTES, 0, 0) == 0;
}

void signal_hook_install(void (*handler)(int))
{
	hook.sa_handler = handler;
	hook.sa_flags = SA_RESTART;
	sigemptyset(&hook.sa_mask);
	for (size_t i = 0; i < sizeof(fatal_signals) / sizeof(fatal_signals[0]); i++)
		sigaddset(&hook.sa_mask, fatal_signals[i]);
	/* One call a signal, the hook set and the disposition before read at
	 * once, and that put back if the program (or its parent: SIG_IGN
	 * outlives exec) chose it; with the signals blocked meanwhile, none
	 * arrives to find the hook where the program chose otherwise. A query
	 * before each set took 17 more system calls in every process. */
	sigset_t before;
	const bool blocked = mask_signals(SIG_BLOCK, &hook.sa_mask, &before);
	for (size_t i = 0; i < sizeof(fatal_signals) / sizeof(fatal_signals[0]); i++) {
		int sig = fatal_signals[i];
		struct sigaction old;
		if (!blocked) {
			if (real_libc()->sigaction(sig, NULL, &old) == 0 && is_default(&old) &&
			    real_libc()->sigaction(sig, &hook, NULL) == 0)
				atomic_store(&hooked[sig], true);
			continue;
		}
		if (real_libc()->sigaction(sig, &hook, &old) < 0)
			continue;
		if (is_default(&old))
			atomic_store(&hooked[sig], true);
		else
			real_libc()->sigaction(sig, &old, NULL);
	}
	if (blocked)
		mask_signals(SIG_SETMASK, &before, NULL);
}

void signal_hook_default_all(void)
{
	struct sigaction dfl = {.sa_handler = SIG_DFL};

	sigemptyset(&dfl.sa_mask);
	for (size_t i = 0; i < sizeof(fatal_signals) / sizeof(fatal_signals[0]); i++)
		if (is_hooked(fatal_signals[i]))
			real_libc()->sigaction(fatal_signals[i], &dfl, NULL);
}

/* The disposition the program would see without memplan: the default. */
static void report_default(struct sigaction *old)
{
	memset(old, 0, sizeof(*old));
	old->sa_handler = SIG_DFL;
	sigemptyset(&old->sa_mask);
}

/* Sets a disposition as the program asked, with memplan's hook in place of the
 * default and the trampoline in front of the program's handlers, and reports
 * the disposition before as the program set it. */
static int set_disposition(int sig, const struct sigaction *act, struct sigaction *old)
{
	bool was_hooked = is_hooked(sig), hook_it = wants_hooked_default(sig, act);
	bool was_wrapped = program_handlers_wrapped(sig);
	bool wrap_it = !hook_it && program_handlers_want(sig, act);
	struct sigaction before, trampoline;
	const struct sigaction *give = act;
	int r;

	program_handlers_note(sig, act);
	if ((!was_hooked && !hook_it && !was_wrapped && !wrap_it) || !program_handlers_own_table())
		return real_libc()->sigaction(sig, act, old);
	if (was_wrapped)
		program_handlers_get(sig, &before); /* before wrap overwrites it */
	if (hook_it)
		give = &hook;
	else if (wrap_it) { /* noted before the kernel can call it */
		program_handlers_wrap(sig, act, &trampoline);
		give = &trampoline;
	}
	r = real_libc()->sigaction(sig, give, old);
	if (r < 0)
		return r;
	if (old && was_hooked)
		report_default(old);
	else if (old && was_wrapped && program_handlers_is_trampoline(old)) {
		/* The flags the kernel reports (glibc's SA_RESTORER among them), but
		 * for the two the trampoline changes. */
		const int own = SA_SIGINFO | SA_RESETHAND;
		before.sa_flags = (old->sa_flags & ~own) | (before.sa_flags & own);
		*old = before;
	}
	if (act) {
		atomic_store(&hooked[sig], hook_it);
		if (wrap_it)
			program_handlers_set_wrapped(sig, true);
		else if (was_wrapped)
			program_handlers_unwrap(sig, act->sa_handler);
	}
	return r;
}

MEMPLAN_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	return set_disposition(sig, act, old);
}

void signal_hook_reset_default(int sig)
{
	struct sigaction dfl = {.sa_handler = SIG_DFL};

	sigemptyset(&dfl.sa_mask);
	set_disposition(sig, &dfl, NULL);
}

MEMPLAN_EXPORT sighandler_t signal(int sig, sighandler_t handler)
{
	struct sigaction act = {.sa_handler = handler, .sa_flags = SA_RESTART}, old;

	program_handlers_note(sig, &act);
	if (!is_hooked(sig) && !(handler == SIG_DFL && hook.sa_handler && is_fatal(sig)) &&
	    !program_handlers_wrapped(sig) && !program_handlers_want(sig, &act))
		return real_libc()->signal(sig, handler);
	/* glibc's signal is sigaction with SA_RESTART and an empty mask. */
	sigemptyset(&act.sa_mask);
	if (sigaction(sig, &act, &old) < 0)
		return SIG_ERR;
	return old.sa_handler;
}

/* The other ways glibc offers to set a disposition call its sigaction inside libc,
 * out of memplan's reach: each is rebuilt here on the sigaction above, with the
 * flags glibc gives it. */

/* glibc declares it only for older X/Open levels than _GNU_SOURCE asks for. */
sighandler_t bsd_signal(int sig, sighandler_t handler);

MEMPLAN_EXPORT sighandler_t bsd_signal(int sig, sighandler_t handler)
{
	return signal(sig, handler);
}

/* System V semantics: the handler runs once, and the signal is not blocked in it. */
MEMPLAN_EXPORT sighandler_t sysv_signal(int sig, sighandler_t handler)
{
	struct sigaction act = {.sa_handler = handler, .sa_flags = SA_RESETHAND | SA_NODEFER}, old;

	if (handler == SIG_ERR || sig < 1 || sig >= NSIG) {
		errno = EINVAL;
		return SIG_ERR;
	}
	sigemptyset(&act.sa_mask);
	if (sigaction(sig, &act, &old) < 0)
		return SIG_ERR;
	return old.sa_handler;
}

/* SIG_HOLD blocks the signal; any other disposition is set and unblocks it. The
 * answer is SIG_HOLD if the signal was blocked, else the disposition before. */
MEMPLAN_EXPORT sighandler_t sigset(int sig, sighandler_t disposition)
{
	struct sigaction act = {.sa_handler = disposition}, old;
	sigset_t one, before;

	if (disposition == SIG_ERR || sig < 1 || sig >= NSIG) {
		errno = EINVAL;
		return SIG_ERR;
	}
	sigemptyset(&one);
	sigaddset(&one, sig);
	if (disposition == SIG_HOLD) {
		if (sigprocmask(SIG_BLOCK, &one, &before) < 0)
			return SIG_ERR;
		if (sigismember(&before, sig))
			return SIG_HOLD;
		if (sigaction(sig, NULL, &old) < 0)
			return SIG_ERR;
		return old.sa_handler;
	}
	sigemptyset(&act.sa_mask);
	if (sigaction(sig, &act, &old) < 0 || sigprocmask(SIG_UNBLOCK, &one, &before) < 0)
		return SIG_ERR;
	return sigismember(&before, sig) ? SIG_HOLD : old.sa_handler;
}
