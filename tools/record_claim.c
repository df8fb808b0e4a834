/* One recording per plan file, see record_claim.h. */
#define _GNU_SOURCE
#include "record_claim.h"

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "hash64.h"

int record_claim(const char *path)
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];
	struct stat st;

	if (!slash || (size_t)(slash - path) >= sizeof(dir))
		return -EINVAL;
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash == path ? 1 : slash - path] = '\0';
	if (slash == path)
		dir[0] = '/';
	if (stat(dir, &st) < 0)
		return -errno;
	/* The directory by identity, not by the path to it: two paths to one
	 * file (a symbolic link on the way, a bind mount) name one claim. */
	const char *name = slash + 1;
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	int len = snprintf(addr.sun_path + 1, sizeof(addr.sun_path) - 1,
			   "memplan-record/%llx/%llx/%016llx", (unsigned long long)st.st_dev,
			   (unsigned long long)st.st_ino,
			   (unsigned long long)hash64(name, strlen(name), 0));
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&addr,
		 (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)len)) < 0) {
		int err = errno;
		close(fd);
		return err == EADDRINUSE ? -EBUSY : -err;
	}
	return fd;
}
