/* Writing through symbolic links, see output_target.h. */
#define _GNU_SOURCE
#include "output_target.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* As the kernel's limit on links followed in one path lookup. */
#define LINKS_MAX 40

int output_target(const char *path, char *out, size_t cap)
{
	char link[PATH_MAX], next[PATH_MAX];
	struct stat st;

	if (strlen(path) >= cap)
		return -ENAMETOOLONG;
	strcpy(out, path);
	for (int hops = 0; lstat(out, &st) == 0 && S_ISLNK(st.st_mode); hops++) {
		if (hops == LINKS_MAX)
			return -ELOOP;
		ssize_t n = readlink(out, link, sizeof(link) - 1);
		if (n < 0)
			return -errno;
		link[n] = '\0';
		const char *slash = strrchr(out, '/');
		int len = link[0] == '/' || !slash
			      ? snprintf(next, sizeof(next), "%s", link)
			      : snprintf(next, sizeof(next), "%.*s/%s", (int)(slash - out), out, link);
		if (len < 0 || (size_t)len >= sizeof(next) || (size_t)len >= cap)
			return -ENAMETOOLONG;
		strcpy(out, next);
	}
	return 0;
}
