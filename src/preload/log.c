/* Malloc-free error logging. See log.h. */
#include "log.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static void append(char *line, size_t cap, size_t *pos, const char *s)
{
	size_t n = strlen(s);

	if (n > cap - *pos)
		n = cap - *pos;
	memcpy(line + *pos, s, n);
	*pos += n;
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
	/* The system call itself, not write(): that is a cancellation point, and
	 * a line said under one of memplan's locks (a recording's limit reached)
	 * would leave the lock held by a cancelled thread. errno stays the
	 * program's, as the call that brought memplan here may succeed. */
	const int saved_errno = errno;
	const bool whole = syscall(SYS_write, fd, line, pos) == (long)pos;
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
