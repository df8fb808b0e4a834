/* Malloc-free error logging. See log.h. */
#include "log.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* The kernel's signal set, for the system calls below. */
#define KERNEL_SIGSET_BYTES 8

static void append(char *line, size_t cap, size_t *pos, const char *s)
{
	size_t n = strlen(s);

	if (n > cap - *pos)
		n = cap - *pos;
	memcpy(line + *pos, s, n);
	*pos += n;
}

/* write(2) of buf that cannot end the program: stderr may be a pipe whose
 * reader is gone (`prog 2>&1 | head -1`), and the SIGPIPE that such a write
 * raises would kill a program that, alone, never writes there. SIGPIPE is
 * blocked in this thread around the write (the kernel sends it to the
 * writing thread), and taken back if the write raised it: one that was
 * already pending is left to the program. */
static bool write_without_sigpipe(int fd, const char *buf, size_t len)
{
	sigset_t pipe_only, old, pending;
	const struct timespec now = {0, 0};

	sigemptyset(&pipe_only);
	sigaddset(&pipe_only, SIGPIPE);
	if (syscall(SYS_rt_sigprocmask, SIG_BLOCK, &pipe_only, &old, KERNEL_SIGSET_BYTES) != 0)
		return syscall(SYS_write, fd, buf, len) == (long)len;
	sigemptyset(&pending);
	syscall(SYS_rt_sigpending, &pending, KERNEL_SIGSET_BYTES);
	const bool was_pending = sigismember(&pending, SIGPIPE);
	const long n = syscall(SYS_write, fd, buf, len);
	if (n < 0 && errno == EPIPE && !was_pending)
		syscall(SYS_rt_sigtimedwait, &pipe_only, NULL, &now, KERNEL_SIGSET_BYTES);
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, KERNEL_SIGSET_BYTES);
	return n == (long)len;
}

bool log_error_to(int fd, const char *first, ...)
{
	char line[1024];
	size_t pos = 0, cap = sizeof(line) - 1; /* room for the newline */
	va_list ap;

	append(line, cap, &pos, "memplan: ");
	va_start(ap, first);
	for (const char *s = first; s; s = va_arg(ap, const char *))
		append(line, cap, &pos, s);
	va_end(ap);
	line[pos++] = '\n';
	/* System calls themselves, not write(): that is a cancellation point,
	 * and a line said under one of memplan's locks (a recording's limit
	 * reached) would leave the lock held by a cancelled thread. errno stays
	 * the program's, as the call that brought memplan here may succeed. */
	const int saved_errno = errno;
	const bool whole = write_without_sigpipe(fd, line, pos);
	errno = saved_errno;
	return whole;
}

char *log_u64(char *buf, uint64_t v)
{
	char tmp[21];
	size_t n = 0, i = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		buf[i++] = tmp[--n];
	buf[i] = '\0';
	return buf;
}
