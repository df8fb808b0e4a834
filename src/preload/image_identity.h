/* Which process image this is: the executable (by build-id, or path) and its
 * arguments. Record files each image's plan under this identity; replay looks its
 * plan up by it, so a shell script, make or a pyenv shim that runs several
 * programs finds the right plan for each of them. */
#pragma once

#include <stdint.h>

/* The bytes of argv an image keeps, to compare it with others: a compiler's
 * command line runs past 4 KiB with many -I and -D, and the source file comes
 * last. Untouched pages of the buffers cost nothing (big_bss.h). */
#define IMAGE_ARGS_MAX 32768

/* Children forked without exec that a recording keeps, per image: the first
 * ones. A program that forks in a loop (a shell, for each command of each
 * round) would otherwise add an image a fork, and its plan grow with the
 * rounds. */
#define IMAGE_FORKS_KEPT 64

struct image_identity {
	uint64_t exe_key;
	uint64_t args_key; /* hash of argv (argv[0] by its file name), however long */
	uint64_t fork_ordinal; /* a child forked without exec: which fork (from 1); else 0 */
	uint32_t args_bytes;
	/* Last, the buffers, of which a process writes the first few bytes
	 * (big_bss.h). */
	char exe_path[4096];
	char args[IMAGE_ARGS_MAX]; /* argv, NUL-separated, cut at IMAGE_ARGS_MAX */
};

/* The args_key of the ordinal-th child forked without exec by an image whose
 * args_key is parent_args_key. */
uint64_t image_fork_args_key(uint64_t parent_args_key, uint64_t ordinal);

/* Reads the identity of the running image (from /proc/self). exe_key must come from
 * callsite_main_module_key() or equivalent. Returns 0 or a negative errno. Does not
 * allocate. */
int image_identity_read(struct image_identity *id, uint64_t exe_key);

/* Makes id the identity of a child that the image id forked without exec, the
 * ordinal-th fork of that image (from 1). It runs the same executable with the
 * same arguments but code of its own, so it is an image of its own; a program
 * that forks in the same order every run makes the same children every run. */
void image_identity_fork(struct image_identity *id, uint64_t ordinal);
