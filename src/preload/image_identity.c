/* Image identity, see image_identity.h. */
#include "image_identity.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "hash64.h"

/* The key hashes argv[0] by its file name only: `sqlite3`, `/usr/bin/sqlite3` and
 * `./sqlite3` run the same executable (exe_key says which), while a multi-call
 * program told apart by its name (xz and unxz) stays apart. A file name is at
 * most 255 bytes; a longer argv[0] component counts by its first 255. */
#define NAME_MAX_BYTES 255

int image_identity_read(struct image_identity *id, uint64_t exe_key)
{
	struct hash64_stream state;
	char chunk[4096], name[NAME_MAX_BYTES];
	size_t name_bytes = 0;
	bool in_arg0 = true;
	ssize_t n, path_bytes;
	int fd;

	/* The fields alone: the buffers are written as far as they are used, and
	 * read no further (args_bytes, the NUL). Zeroing them all touched 36 KiB,
	 * nine pages of resident set and faults in every process. */
	id->exe_key = exe_key;
	id->args_key = id->fork_ordinal = 0;
	id->args_bytes = 0;
	path_bytes = readlink("/proc/self/exe", id->exe_path, sizeof(id->exe_path) - 1);
	if (path_bytes < 0)
		path_bytes = 0;
	id->exe_path[path_bytes] = '\0';

	fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	hash64_begin(&state);
	while ((n = read(fd, chunk, sizeof(chunk))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			close(fd);
			return -errno;
		}
		size_t from = 0;
		for (; in_arg0 && from < (size_t)n && chunk[from]; from++) {
			if (chunk[from] == '/')
				name_bytes = 0;
			else if (name_bytes < sizeof(name))
				name[name_bytes++] = chunk[from];
		}
		if (in_arg0 && from < (size_t)n) { /* argv[0]'s NUL: the rest as it is */
			hash64_add(&state, name, name_bytes);
			in_arg0 = false;
		}
		if (!in_arg0)
			hash64_add(&state, chunk + from, (size_t)n - from);
		if (id->args_bytes < sizeof(id->args)) {
			size_t room = sizeof(id->args) - id->args_bytes;
			size_t take = (size_t)n < room ? (size_t)n : room;
			memcpy(id->args + id->args_bytes, chunk, take);
			id->args_bytes += (uint32_t)take;
		}
	}
	close(fd);
	if (in_arg0) /* argv[0] alone, without its NUL */
		hash64_add(&state, name, name_bytes);
	id->args_key = hash64_end(&state);
	return 0;
}

uint64_t image_fork_args_key(uint64_t parent_args_key, uint64_t ordinal)
{
	return hash64(&ordinal, sizeof(ordinal), parent_args_key);
}

void image_identity_fork(struct image_identity *id, uint64_t ordinal)
{
	id->args_key = image_fork_args_key(id->args_key, ordinal);
	id->fork_ordinal = ordinal;
}
