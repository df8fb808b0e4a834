/* Merging images into a shared plan file, see plan_store.h. */
#define _GNU_SOURCE
#include "plan_store.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "atomic_file.h"
#include "file_io.h"

/* Takes an exclusive flock on fd, trying again with growing pauses until
 * wait_ms have passed. Returns 0, -ETIMEDOUT, or a negative errno. */
static int lock_within(int fd, unsigned wait_ms)
{
	struct timespec start, now, pause = {0, 1000000}; /* 1 ms, doubling to 64 */

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			return 0;
		if (errno != EWOULDBLOCK && errno != EINTR)
			return -errno;
		clock_gettime(CLOCK_MONOTONIC, &now);
		uint64_t waited_ms = (uint64_t)(now.tv_sec - start.tv_sec) * 1000 +
				     (uint64_t)(now.tv_nsec / 1000000) -
				     (uint64_t)(start.tv_nsec / 1000000);
		if (waited_ms >= wait_ms)
			return -ETIMEDOUT;
		nanosleep(&pause, NULL);
		if (pause.tv_nsec < 64000000)
			pause.tv_nsec *= 2;
	}
}

/* Locks the directory that holds path: no lock file is left behind. */
int plan_store_lock(const char *path, unsigned wait_ms)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	size_t len = slash ? (size_t)(slash - path) : 0;
	int fd;

	if (len >= sizeof(dir))
		return -ENAMETOOLONG;
	if (slash == path)
		len = 1; /* the root directory */
	if (len)
		memcpy(dir, path, len);
	else
		dir[len++] = '.';
	dir[len] = '\0';
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int r = lock_within(fd, wait_ms);
	if (r < 0) {
		close(fd);
		return r;
	}
	return fd;
}

int plan_store_merge(const char *path, uint64_t record_id, const struct plan_image *image,
		     unsigned lock_wait_ms)
{
	struct plan_image *images = NULL;
	uint32_t count = 0, old_count = 0;
	const void *old = NULL;
	size_t old_len = 0;
	bool add_new = true;
	int lock_fd, r;

	r = file_check_regular_or_absent(path);
	if (r < 0)
		return r;
	lock_fd = plan_store_lock(path, lock_wait_ms);
	if (lock_fd < 0)
		return lock_fd;
	/* A file that is not a plan is data of the user's (plan_file_may_replace):
	 * never replaced. */
	if (!plan_file_may_replace(path)) {
		r = -EEXIST;
		goto out;
	}
	/* A missing or corrupt old file, or one from another recording, is simply
	 * replaced; only this recording's file is read whole and merged. */
	if (plan_file_peek_record_id(path) == record_id &&
	    plan_file_map(path, &old, &old_len, NULL, 0) == 0 &&
	    plan_file_header(old)->record_id == record_id)
		old_count = plan_file_header(old)->image_count;

	images = calloc((size_t)old_count + 1, sizeof(*images));
	if (!images) {
		r = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < old_count; i++) {
		struct plan_image im;
		plan_file_image(old, i, &im);
		if (im.record.exe_key == image->record.exe_key &&
		    im.record.args_key == image->record.args_key) {
			bool replace = im.record.pid == image->record.pid ||
				       image->record.entry_count > im.record.entry_count;
			if (replace)
				continue;
			add_new = false;
		}
		images[count++] = im;
	}
	if (add_new)
		images[count++] = *image;
	r = plan_file_write(path, images, count, record_id);
out:
	free(images);
	plan_file_unmap((void *)old, old_len);
	close(lock_fd); /* releases the lock */
	return r;
}
