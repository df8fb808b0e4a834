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
