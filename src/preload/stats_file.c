/* The statistics file, see stats_file.h. */
#define _GNU_SOURCE
#include "stats_file.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file_io.h"
#include "own_writes.h"
#include "plan_file.h"
#include "quiet_fd.h"

static bool may_create = true;
static bool checked; /* stats_file_check found it writable */
static int kept_fd = -1;
static dev_t kept_dev;
static ino_t kept_ino;

/* Whether st is the file of the program's stdout or stderr. */
static bool standard_stream(const struct stat *st)
{
	struct stat out;

	for (int fd = 1; fd <= 2; fd++)
		if (fstat(fd, &out) == 0 && out.st_dev == st->st_dev && out.st_ino == st->st_ino)
			return true;
	return false;
}

int stats_file_check(const char *path, bool create)
{
	struct stat st;
	int fd;

	may_create = create;
	fd = file_open_append(path, create);
	if (fd == -ENOENT && !create)
		return 1;
	if (fd < 0)
		return fd;
	const bool regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
	/* Only a file with something in it may be a plan, and not the one a
	 * memplan command made for itself (not to be created again): each
	 * process of a shell loop would read it. */
	if (regular && create && st.st_size > 0 && plan_file_starts_as_plan(path)) {
		close(fd);
		return STATS_FILE_IS_PLAN;
	}
	checked = true;
	/* Kept only if it is a regular file that is also the program's stdout or
	 * stderr (--stats /dev/stderr), which coreutils close before they exit;
	 * any other would be among the program's descriptors for nothing. A
	 * pipe is never kept: its reader would wait for this process to end. */
	if (regular && standard_stream(&st)) {
		if (kept_fd >= 0)
			close(kept_fd);
		kept_fd = quiet_fd(fd);
		kept_dev = st.st_dev;
		kept_ino = st.st_ino;
		return 0;
	}
	close(fd);
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

static int append(const char *path, const void *data, size_t len, int timeout_ms)
{
	int fd, r;

	if (kept_still_ours())
		return file_write_all(kept_fd, data, len, timeout_ms);
	fd = file_open_append(path, may_create);
	if (fd == -ENOENT && !may_create)
		return 0; /* its maker has read it and removed it */
	/* Writable at start-up: a sandbox or the program's use of its descriptor
	 * limit stops it now, which its stderr, the program's, is not for. */
	if (checked && (fd == -EPERM || fd == -EACCES || fd == -EMFILE || fd == -ENFILE))
		return 0;
	if (fd < 0)
		return fd;
	r = file_write_all(fd, data, len, timeout_ms);
	close(fd);
	return r;
}

int stats_file_append(const char *path, const void *data, size_t len, int timeout_ms)
{
	struct own_writes w;
	struct own_descriptors d;

	own_writes_begin(&w);
	own_descriptors_begin(&d);
	int r = append(path, data, len, timeout_ms);
	own_descriptors_end(&d);
	own_writes_end(&w);
	return r;
}
