/* Finding libmemplan.so, see preload_path.h. LD_PRELOAD paths must be absolute:
 * children may chdir before they exec. */
#include "preload_path.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"

static int exists(const char *path)
{
	return access(path, R_OK) == 0;
}

int preload_path_find(char *out, size_t cap)
{
	const char *env = getenv("MEMPLAN_PRELOAD");
	char self[PATH_MAX];
	ssize_t n;

	if (env && *env) {
		if (!realpath(env, out) && (size_t)snprintf(out, cap, "%s", env) >= cap)
			return -ENAMETOOLONG;
		return exists(out) && out[0] == '/' ? 0 : -ENOENT;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = '\0';
		/* build/tools/memplan -> build/src/preload/libmemplan.so */
		snprintf(out, cap, "%s/../src/preload/" MEMPLAN_PRELOAD_NAME, dirname(self));
		char resolved[PATH_MAX];
		if (realpath(out, resolved) && exists(resolved)) {
			snprintf(out, cap, "%s", resolved);
			return 0;
		}
	}
	snprintf(out, cap, "%s/%s", MEMPLAN_LIBDIR, MEMPLAN_PRELOAD_NAME);
	return exists(out) ? 0 : -ENOENT;
}
