/* Which process image this is: the executable (by build-id, or path) and its
 * arguments. Record files each image's plan under this identity; replay looks its
 * plan up by it, so a shell script, make or a pyenv shim that runs several
 * programs finds the right plan for each of them. */
#pragma once

#include <stdint.h>

#define IMAGE_ARGS_MAX 4096

struct image_identity {
	uint64_t exe_key;
	uint64_t args_key; /* hash of argv (argv[0] by its file name), however long */
	char exe_path[4096];
	char args[IMAGE_ARGS_MAX]; /* argv, NUL-separated, cut at IMAGE_ARGS_MAX */
	uint32_t args_bytes;
};

/* Reads the identity of the running image (from /proc/self). exe_key must come from
 * callsite_main_module_key() or equivalent. Returns 0 or a negative errno. Does not
 * allocate. */
int image_identity_read(struct image_identity *id, uint64_t exe_key);
