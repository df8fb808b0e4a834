/* Writes that cannot end the program, see own_writes.h. */
#include "own_writes.h"

#include <errno.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* The kernel's signal set. */
#define KERNEL_SIGSET_BYTES 8

static void own_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGPIPE);
	sigaddset(set, SIGXFSZ);
}

void own_writes_begin(struct own_writes *w)
{
	const int saved_errno = errno;
	sigset_t own, pending;

	own_signals(&own);
	w->blocked =
	    syscall(SYS_rt_sigprocmask, SIG_BLOCK, &own, &w->old, KERNEL_SIGSET_BYTES) == 0;
	sigemptyset(&pending);
	if (w->blocked)
		syscall(SYS_rt_sigpending, &pending, KERNEL_SIGSET_BYTES);
	w->pipe_pending = sigismember(&pending, SIGPIPE) == 1;
	w->xfsz_pending = sigismember(&pending, SIGXFSZ) == 1;
	errno = saved_errno;
}

void own_writes_end(struct own_writes *w)
{
	const int saved_errno = errno;
	const struct timespec now = {0, 0};
	sigset_t raised;

	if (!w->blocked)
		return;
	/* Taken back: raised by memplan's writes, not pending before them. */
	sigemptyset(&raised);
	if (!w->pipe_pending)
		sigaddset(&raised, SIGPIPE);
	if (!w->xfsz_pending)
		sigaddset(&raised, SIGXFSZ);
	while (syscall(SYS_rt_sigtimedwait, &raised, NULL, &now, KERNEL_SIGSET_BYTES) > 0)
		;
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &w->old, NULL, KERNEL_SIGSET_BYTES);
	errno = saved_errno;
}

void own_descriptors_begin(struct own_descriptors *d)
{
	const int saved_errno = errno;
	struct rlimit more;

	d->raised = false;
	if (getrlimit(RLIMIT_NOFILE, &d->old) == 0 && d->old.rlim_cur < d->old.rlim_max) {
		more = d->old;
		more.rlim_cur = d->old.rlim_max - d->old.rlim_cur > OWN_DESCRIPTORS
				    ? d->old.rlim_cur + OWN_DESCRIPTORS
				    : d->old.rlim_max;
		d->raised = setrlimit(RLIMIT_NOFILE, &more) == 0;
	}
	errno = saved_errno;
}

void own_descriptors_end(struct own_descriptors *d)
{
	const int saved_errno = errno;

	/* Lowering a soft limit always succeeds, below descriptors open too. */
	if (d->raised)
		setrlimit(RLIMIT_NOFILE, &d->old);
	errno = saved_errno;
}
