/* Image identity, see image_identity.h. */
#include "image_identity.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

int image_identity_read(struct image_identity *id, uint64_t exe_key)
{
	XXH3_state_t state;
	char chunk[4096];
	ssize_t n, path_bytes;
	int fd;

	memset(id, 0, sizeof(*id));
	id->exe_key = exe_key;
	path_bytes = readlink("/proc/self/exe", id->exe_path, sizeof(id->exe_path) - 1);
	if (path_bytes < 0)
		path_bytes = 0;
	id->exe_path[path_bytes] = '\0';

	fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	XXH3_64bits_reset(&state);
	while ((n = read(fd, chunk, sizeof(chunk))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			close(fd);
			return -errno;
		}
		XXH3_64bits_update(&state, chunk, (size_t)n);
		if (id->args_bytes < sizeof(id->args)) {
			size_t room = sizeof(id->args) - id->args_bytes;
			size_t take = (size_t)n < room ? (size_t)n : room;
			memcpy(id->args + id->args_bytes, chunk, take);
			id->args_bytes += (uint32_t)take;
		}
	}
	close(fd);
	id->args_key = XXH3_64bits_digest(&state);
	return 0;
}
