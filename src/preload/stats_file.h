/* The statistics file (MEMPLAN_STATS), opened when the process starts.
 *
 * The file is checked at start-up, while stderr is still open to say what is
 * wrong with it; a regular file's descriptor is then kept (out of the
 * program's way, quiet_fd.h) for the line written at exit. A process that a
 * sandbox stops opening files once it runs (Chromium's renderers) still
 * writes its line; before, each said on stderr that it could not. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Opens and checks path; keeps its descriptor if it is a regular file. Without
 * create, a missing file is no error: it is the file of a memplan command that
 * has ended (MEMPLAN_STATS_NO_CREATE), and no line is written. Returns 0, 1 if
 * there is no file and create is not set, or a negative errno as
 * file_open_append. */
int stats_file_open(const char *path, bool create);

/* Appends len bytes to the statistics file with one write: through the kept
 * descriptor if it still names the file opened at start-up (a program may
 * have closed it, or put another file under its number), else by opening
 * path again. Returns 0 or a negative errno. Async-signal-safe. */
int stats_file_append(const char *path, const void *data, size_t len, int timeout_ms);
