/* Ending standard output, see stdout_end.h. */
#define _GNU_SOURCE
#include "stdout_end.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <sys/stat.h>

/* Whether fd is a pipe or a socket with no reader left: poll says POLLERR
 * for a pipe's write end whose readers have all closed, POLLHUP for a socket
 * its peer shut. errno, whatever it was, is no guide: the write that failed
 * may have been an earlier one, in the middle of stdio's buffering. */
static bool reader_gone(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLOUT};
	struct stat st;

	return fd >= 0 && fstat(fd, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)) &&
	       poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP));
}

int stdout_end(FILE *out)
{
	const bool failed = fflush(out) != 0 || ferror(out);
	const int err = errno;

	if (!failed)
		return 0;
	if (reader_gone(fileno(out)))
		return STDOUT_END_READER_GONE;
	errno = err ? err : EIO;
	return -1;
}
