/* Writing a file so that readers see either the old content or the complete new
 * content, never a torn one: write a temporary file in the same directory and
 * rename it over the target (no fsync: see atomic_file.c). Uses only system calls
 * (no stdio, no malloc), so the preload library can call it from exit paths. */
#pragma once

#include <stddef.h>

/* Writes len bytes of data to path atomically. A path that names a device or
 * a pipe (/dev/null, /dev/stdout) is written in place instead, as
 * file_open_append opens it. Returns 0 or a negative errno (the temporary file
 * is removed on failure). Thread-safe; async-signal-safe; does not allocate. */
int atomic_file_write(const char *path, const void *data, size_t len);

struct iovec;

/* The same for data given in pieces, written in order. */
int atomic_file_writev(const char *path, const struct iovec *pieces, int piece_count);

/* Checks at start-up that a file could be created next to path (the directory
 * exists and is writable). Returns 0 or a negative errno. Does not allocate. */
int atomic_file_check_writable(const char *path);
