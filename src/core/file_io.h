/* Opening and writing the files memplan is told to use (a plan, a statistics
 * file) so that a path that names something else never blocks the program: a
 * FIFO that no process writes or reads, a device. Only system calls (no stdio,
 * no malloc), so the preload library can use them on its exit paths. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

/* Opens path for reading, without blocking (O_NONBLOCK), and refuses anything but
 * a regular file with -EINVAL, before reading a byte. Returns the descriptor
 * (O_CLOEXEC) with *st filled in, or a negative errno. Async-signal-safe. */
int file_open_regular(const char *path, struct stat *st);

/* Whether path, if it exists, is a regular file (symbolic links followed).
 * Returns 0, -EINVAL if it is something else, or a negative errno from stat
 * other than -ENOENT. Does not open it. */
int file_check_regular_or_absent(const char *path);

/* Opens path to append to it, without blocking; if there is no file, creates a
 * regular file if create is set, else fails with -ENOENT. A regular file or a
 * character device (a terminal, /dev/null) is taken as it is; a FIFO or pipe
 * only if some process has it open for reading (else -ENXIO), and it stays
 * non-blocking (see file_write_all); anything else is refused with -EINVAL.
 * Returns the descriptor (O_CLOEXEC) or a negative errno. Async-signal-safe. */
int file_open_append(const char *path, bool create);

/* Writes all of data to fd. On a non-blocking descriptor whose reader does not
 * keep up (a pipe), waits for it at most timeout_ms milliseconds in all, then
 * gives up with -ETIMEDOUT. Returns 0 or a negative errno. Async-signal-safe. */
int file_write_all(int fd, const void *data, size_t len, int timeout_ms);
