/* Names of temporary files in a program's arguments, seen through.
 *
 * gcc runs cc1 and as on /tmp/ccXXXXXX.s, mkstemp makes /tmp/fooXXXXXX, Python
 * tmpXXXXXXXX: names that differ from run to run of the same command. In an
 * argument, a path under /tmp, /var/tmp, /dev/shm or $TMPDIR (at the start of
 * the argument, after '=', ',' or ':', or right after an option's name, as
 * in -MF/tmp/x) has each run of six or more letters, digits and underscores
 * in it replaced by '*'; the path ends at ',', ':', '=' or a space. Replay
 * takes an image whose arguments differ from the process's only so for the
 * same run of the program, and diff and check pair such images.
 *
 * Pure: no allocation, no global state, so that the preload library can use it
 * at start-up. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Reads an argument (len bytes, or up to a NUL) as it reads with its
 * temporary names replaced, one character at a time. */
struct temp_names_reader {
	const char *arg;
	size_t len, at;
	const char *tmpdir;  /* $TMPDIR, or NULL */
	size_t verbatim_end; /* a temporary directory's prefix, read as it is */
	size_t run_left;     /* the rest of a short run of name characters */
	bool in_temp;	     /* within a path under a temporary directory */
};

/* Starts reading arg (at most len bytes; it may end earlier with a NUL), with
 * tmpdir as $TMPDIR (NULL or not absolute: none). */
void temp_names_begin(struct temp_names_reader *r, const char *arg, size_t len, const char *tmpdir);

/* The next character of the argument as normalised, or -1 at its end. */
int temp_names_next(struct temp_names_reader *r);

/* Whether two arguments read the same once their temporary names are
 * replaced. */
bool temp_names_same(const char *a, size_t a_len, const char *b, size_t b_len, const char *tmpdir);
