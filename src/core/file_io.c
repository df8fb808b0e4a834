/* Files that must not block the program, see file_io.h. */
#include "file_io.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>

int file_open_regular(const char *path, struct stat *st)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (fstat(fd, st) < 0) {
		int r = -errno;
		close(fd);
		return r;
	}
	if (!S_ISREG(st->st_mode)) {
		close(fd);
		return -EINVAL;
	}
	return fd;
}

int file_check_regular_or_absent(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	return S_ISREG(st.st_mode) ? 0 : -EINVAL;
}

int file_open_append(const char *path, bool create)
{
	/* O_NONBLOCK: opening a FIFO for writing with no reader fails (ENXIO)
	 * instead of waiting for one. O_CREAT only if there is no file: a
	 * sandbox that forbids creating files (man-db's helpers') may still let
	 * a process append to the one memplan replay made. */
	const int flags = O_WRONLY | O_APPEND | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
	int fd = open(path, flags);
	struct stat st;

	if (fd < 0 && errno == ENOENT && create)
		fd = open(path, flags | O_CREAT, 0644);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !(S_ISREG(st.st_mode) || S_ISCHR(st.st_mode) ||
				    S_ISFIFO(st.st_mode))) {
		close(fd);
		return -EINVAL;
	}
	/* A regular file or a device is written as usual; a pipe stays non-blocking,
	 * so that a reader that stops reading cannot stop the program. */
	if (!S_ISFIFO(st.st_mode))
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}

static long long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

int file_write_all(int fd, const void *data, size_t len, int timeout_ms)
{
	const char *p = data;
	const long long deadline = now_ms() + timeout_ms;

	while (len) {
		ssize_t n = write(fd, p, len);
		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != EAGAIN)
			return -errno;
		long long left = deadline - now_ms();
		if (left <= 0)
			return -ETIMEDOUT;
		struct pollfd out = {.fd = fd, .events = POLLOUT};
		if (poll(&out, 1, (int)left) < 0 && errno != EINTR)
			return -errno;
	}
	return 0;
}
