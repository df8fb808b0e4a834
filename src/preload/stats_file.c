/* The statistics file, see stats_file.h. */
#define _GNU_SOURCE
#include "stats_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file_io.h"
#include "quiet_fd.h"

static int kept_fd = -1;
static dev_t kept_dev;
static ino_t kept_ino;
static bool may_create = true;

int stats_file_open(const char *path, bool create)
{
	struct stat st;
	int fd;

	may_create = create;
	fd = file_open_append(path, create);
	if (fd == -ENOENT && !create)
		return 1;
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		/* A pipe or a device is opened at exit only: a process that lives
		 * on would otherwise keep a pipe's reader from its end. */
		close(fd);
		return 0;
	}
	if (kept_fd >= 0)
		close(kept_fd);
	kept_fd = quiet_fd(fd);
	kept_dev = st.st_dev;
	kept_ino = st.st_ino;
	return 0;
}

/* Whether the kept descriptor is still the file, open for appending. */
static bool kept_still_ours(void)
{
	struct stat st;
	int flags;

	return kept_fd >= 0 && fstat(kept_fd, &st) == 0 && st.st_dev == kept_dev &&
	       st.st_ino == kept_ino && (flags = fcntl(kept_fd, F_GETFL)) >= 0 &&
	       (flags & O_ACCMODE) == O_WRONLY && (flags & O_APPEND);
}

int stats_file_append(const char *path, const void *data, size_t len, int timeout_ms)
{
	int fd, r;

	if (kept_still_ours())
		return file_write_all(kept_fd, data, len, timeout_ms);
	fd = file_open_append(path, may_create);
	if (fd == -ENOENT && !may_create)
		return 0; /* its maker has read it and removed it */
	if (fd < 0)
		return fd;
	r = file_write_all(fd, data, len, timeout_ms);
	close(fd);
	return r;
}
