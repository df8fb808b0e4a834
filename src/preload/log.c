/* Malloc-free error logging. See log.h. */
#include "log.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "hash64.h"
#include "own_writes.h"

/* Appends s, bounded by cap, with its control characters escaped (\n, \t, \r,
 * else \xHH): a path from the environment (MEMPLAN_PLAN) could hold a newline,
 * which would split the line, or an escape sequence for the terminal. */
static void append(char *line, size_t cap, size_t *pos, const char *s)
{
	for (; *s; s++) {
		const unsigned char c = (unsigned char)*s;
		char esc[4] = {'\\', 0, 0, 0};
		size_t n = 2;

		if (c >= 0x20 && c != 0x7f) {
			esc[0] = (char)c;
			n = 1;
		} else if (c == '\n' || c == '\t' || c == '\r') {
			esc[1] = c == '\n' ? 'n' : c == '\t' ? 't' : 'r';
		} else {
			esc[1] = 'x';
			esc[2] = "0123456789abcdef"[c >> 4];
			esc[3] = "0123456789abcdef"[c & 15];
			n = 4;
		}
		if (n > cap - *pos)
			return;
		memcpy(line + *pos, esc, n);
		*pos += n;
	}
}

/* write(2) of buf that cannot end the program: stderr may be a pipe whose
 * reader is gone (`prog 2>&1 | head -1`), or a file past the program's size
 * limit (own_writes.h). */
static bool write_without_signals(int fd, const char *buf, size_t len)
{
	struct own_writes w;

	own_writes_begin(&w);
	const bool whole = syscall(SYS_write, fd, buf, len) == (long)len;
	own_writes_end(&w);
	return whole;
}

/* The line "memplan: " and the strings from first on make, into line (cap
 * bytes, the newline included); returns its length. */
static size_t make_line(char *line, size_t cap, const char *first, va_list ap)
{
	size_t pos = 0;

	cap--; /* room for the newline */
	append(line, cap, &pos, "memplan: ");
	for (const char *s = first; s; s = va_arg(ap, const char *))
		append(line, cap, &pos, s);
	line[pos++] = '\n';
	return pos;
}

/* System calls themselves, not write(): that is a cancellation point, and a
 * line said under one of memplan's locks (a recording's limit reached) would
 * leave the lock held by a cancelled thread. errno stays the program's, as
 * the call that brought memplan here may succeed. */
static bool write_line(int fd, const char *line, size_t len)
{
	const int saved_errno = errno;
	const bool whole = write_without_signals(fd, line, len);

	errno = saved_errno;
	return whole;
}

bool log_error_to(int fd, const char *first, ...)
{
	char line[LOG_LINE_MAX];
	va_list ap;

	va_start(ap, first);
	const size_t len = make_line(line, sizeof(line), first, ap);
	va_end(ap);
	return write_line(fd, line, len);
}

bool log_error_once(const char *first, ...)
{
	char line[LOG_LINE_MAX], mark[17], marks[LOG_SAID_MARKS * 17];
	va_list ap;

	va_start(ap, first);
	const size_t len = make_line(line, sizeof(line), first, ap);
	va_end(ap);
	const uint64_t h = hash64(line, len, 0);
	for (int i = 15; i >= 0; i--)
		mark[15 - i] = "0123456789abcdef"[(h >> (4 * i)) & 15];
	mark[16] = '\0';
	/* The marks of an ancestor, the most recent last; at most
	 * LOG_SAID_MARKS of them are passed on. */
	const char *said = getenv(LOG_SAID_ENV);
	size_t n = 0;
	for (const char *m = said; m && *m; m += *m == ' ') {
		size_t l = strcspn(m, " ");
		if (l == 16 && !memcmp(m, mark, 16))
			return true; /* said by the process that started this one */
		m += l;
		n++;
	}
	const bool whole = write_line(STDERR_FILENO, line, len);
	size_t at = 0;
	if (said) {
		const char *keep = said;
		for (; n >= LOG_SAID_MARKS; n--)
			keep += strcspn(keep, " ") + (keep[strcspn(keep, " ")] == ' ');
		size_t l = strnlen(keep, sizeof(marks) - 18);
		memcpy(marks, keep, l);
		at = l;
		if (at)
			marks[at++] = ' ';
	}
	memcpy(marks + at, mark, 17);
	const int saved_errno = errno;
	setenv(LOG_SAID_ENV, marks, 1);
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
