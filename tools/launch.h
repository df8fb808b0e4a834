/* Running the user's command under the preload library and passing its exit
 * status through. */
#pragma once

#include <stddef.h>

/* Adds the preload library in front of LD_PRELOAD. Returns 0 or exits 1 after a
 * message if the library cannot be found. */
int launch_add_preload(void);

/* Writes path made absolute (against the working directory) into out: children
 * may chdir, so paths handed to them in the environment must be absolute.
 * Returns 0, or -ENAMETOOLONG / a negative errno from getcwd. */
int launch_absolute_path(const char *path, char *out, size_t cap);

/* Runs argv (searched in PATH) and waits for it. Returns its exit status, or
 * 128 + signal number if a signal ended it, or 127 with a message if it could not
 * be started. SIGINT and SIGQUIT are ignored while waiting, as system() does, so
 * the command sees them first. */
int launch_run(char **argv);
