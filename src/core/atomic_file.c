/* Atomic whole-file replacement: temp file + rename. See atomic_file.h.
 * There is no fsync: the guarantee is against a process that fails or dies
 * mid-write (readers see the old file or the new one, never a torn one), not
 * against power loss. A plan can be recorded again; making every recording wait
 * for the disk (seconds for a big plan) is not worth it. A file cut short by a
 * crash of the machine is refused by the reader as truncated.
 * The temporary name carries the pid and a nanosecond clock reading so that
 * concurrent writers (several processes or threads of one recording) do not share
 * a temp file; O_EXCL catches the rest. */
#include "atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "file_io.h"

/* How long a write to a pipe waits for its reader to make room. */
#define IN_PLACE_WAIT_MS 10000

/* Appends the decimal form of v to buf at *pos, bounded by cap. */
static void append_u64(char *buf, size_t *pos, size_t cap, uint64_t v)
{
	char digits[24];
	size_t n = 0;

	do {
		digits[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n && *pos + 1 < cap)
		buf[(*pos)++] = digits[--n];
	buf[*pos] = '\0';
}

static int temp_name(const char *path, char *out, size_t cap)
{
	struct timespec now;
	size_t len = strlen(path), pos;

	if (len + 48 > cap)
		return -ENAMETOOLONG;
	memcpy(out, path, len);
	pos = len;
	memcpy(out + pos, ".tmp.", 5);
	pos += 5;
	out[pos] = '\0';
	append_u64(out, &pos, cap, (uint64_t)getpid());
	out[pos++] = '.';
	out[pos] = '\0';
	clock_gettime(CLOCK_MONOTONIC, &now);
	append_u64(out, &pos, cap, (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec);
	return 0;
}

/* Writes all of data to fd. Returns 0 or a negative errno. */
static int write_all(int fd, const char *data, size_t len)
{
	while (len) {
		ssize_t n = write(fd, data, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

int atomic_file_write(const char *path, const void *data, size_t len)
{
	struct iovec piece = {(void *)data, len};

	return atomic_file_writev(path, &piece, 1);
}

/* A device or a pipe is written as it is: renaming a file over /dev/null
 * would replace the machine's null device with a regular file. */
static int write_in_place(const char *path, const struct iovec *pieces, int piece_count)
{
	int fd = file_open_append(path, true), r = 0;

	if (fd < 0)
		return fd;
	for (int k = 0; k < piece_count && r == 0; k++)
		r = file_write_all(fd, pieces[k].iov_base, pieces[k].iov_len, IN_PLACE_WAIT_MS);
	if (close(fd) < 0 && r == 0)
		r = -errno;
	return r;
}

int atomic_file_writev(const char *path, const struct iovec *pieces, int piece_count)
{
	char tmp[4096];
	struct stat st;
	int fd, r;

	const bool replaces = stat(path, &st) == 0;

	if (replaces && !S_ISREG(st.st_mode))
		return write_in_place(path, pieces, piece_count);
	r = temp_name(path, tmp, sizeof(tmp));
	if (r < 0)
		return r;
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, replaces ? 0600 : 0644);
	if (fd < 0)
		return -errno;
	/* The file replaced keeps its owner and mode, before a byte is written:
	 * a plan holds command lines, and one made private must stay so. An
	 * owner this process may not give is left as it is (the group first:
	 * chown clears the set-ID bits that chmod then gives back). */
	if (replaces) {
		if (fchown(fd, st.st_uid, st.st_gid) < 0)
			(void)!fchown(fd, (uid_t)-1, st.st_gid);
		(void)!fchmod(fd, st.st_mode & 07777);
	}
	for (int k = 0; k < piece_count; k++) {
		r = write_all(fd, pieces[k].iov_base, pieces[k].iov_len);
		if (r < 0)
			goto err_unlink;
	}
	if (close(fd) < 0) {
		r = -errno;
		fd = -1;
		goto err_unlink;
	}
	fd = -1;
	if (rename(tmp, path) < 0) {
		r = -errno;
		goto err_unlink;
	}
	return 0;

err_unlink:
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	return r;
}

int atomic_file_check_writable(const char *path)
{
	const uint64_t all = ~UINT64_C(0);
	uint64_t before;
	char tmp[4096];
	int fd, r;

	r = temp_name(path, tmp, sizeof(tmp));
	if (r < 0)
		return r;
	/* No signal between the file's making and its removal: a process ended
	 * there (a program that starts a child and terminates it at once) left
	 * the empty file beside the plan. By the system call: the library calls
	 * this at start-up, where libc's sigprocmask would fault in a page more
	 * of libc's code. */
	const bool masked =
	    syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, &before, sizeof(before)) == 0;
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	r = fd < 0 ? -errno : 0;
	if (fd >= 0) {
		close(fd);
		unlink(tmp);
	}
	if (masked)
		syscall(SYS_rt_sigprocmask, SIG_SETMASK, &before, NULL, sizeof(before));
	return r;
}
