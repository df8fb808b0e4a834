/* The statistics file (MEMPLAN_STATS), checked when the process starts and
 * written when it ends.
 *
 * The file is checked at start-up, while stderr is still open to say what is
 * wrong with it, and opened again by its path for the line written at exit:
 * memplan keeps no descriptor of it, which the program would see among its
 * own (a test that lists a child's descriptors, a daemon that audits them),
 * except for a regular file that is also the program's stdout or stderr,
 * which the program may have closed by then. A process that a sandbox stops
 * opening files once it runs (Chromium's renderers), or that has used up its
 * descriptors, loses its line without a word. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Checks that path can be opened for appending (and keeps it open if it is
 * the program's stdout or stderr). Without create, a missing file is no error:
 * it is the file of a memplan command that has ended (MEMPLAN_STATS_NO_CREATE),
 * and no line is written. A plan is no statistics file: a line appended to it
 * would spoil it for good (MEMPLAN_STATS named the plan replayed, or one kept
 * as a baseline). Returns 0, 1 if there is no file and create is not set,
 * STATS_FILE_IS_PLAN, or a negative errno as file_open_append. */
#define STATS_FILE_IS_PLAN 2
int stats_file_check(const char *path, bool create);

/* Appends len bytes to the statistics file with one write: through the kept
 * descriptor if it still names the file opened at start-up, else by opening
 * path. Returns 0 (also when the line is lost as stats_file.h says) or a
 * negative errno. Async-signal-safe. */
int stats_file_append(const char *path, const void *data, size_t len, int timeout_ms);
