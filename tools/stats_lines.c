/* Statistics files, see stats_lines.h: where a replay's or a recording's
 * processes write them, and reading their lines back (each parsed by
 * stats_line_parse.c). */
#define _GNU_SOURCE
#include "stats_lines.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <limits.h>
#include <unistd.h>

#include "launch.h"
#include "plan_file.h"
#include "text_safe.h"

int stats_lines_read(const char *path, off_t from,
		     void (*each)(const struct stats_line *line, void *ctx), void *ctx)
{
	struct stat st;
	int count = 0;
	FILE *f;

	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || !(f = fopen(path, "re")))
		return -1;
	if (fseeko(f, from, SEEK_SET) == 0)
		count = stats_lines_read_stream(f, each, ctx);
	fclose(f);
	return count;
}

int stats_lines_read_stream(FILE *f, void (*each)(const struct stats_line *line, void *ctx),
			    void *ctx)
{
	struct stats_line *line = malloc(sizeof(*line));
	char *text = NULL;
	size_t cap = 0;
	int count = 0;

	if (!line)
		return -1;
	while (getline(&text, &cap, f) >= 0)
		if (stats_line_parse(text, line)) {
			each(line, ctx);
			count++;
		}
	free(text);
	free(line);
	return ferror(f) ? -1 : count;
}

/* The name of the statistics file in the directory of its own. */
#define TEMPORARY_NAME "stats.jsonl"

/* Makes an empty file of our own, its name into path: in a directory of its
 * own in dir, which others may enter but not list (0711), the file open to
 * their appending (0622). A process of the command that dropped its
 * privileges (a daemon started as root that becomes www-data) then still
 * writes its line; it could not to a file of root's, and `--strict` failed a
 * run served whole. No one else can find the file. With room for some lines:
 * on a full file system the empty file was made all the same, and every line
 * written to it later failed. Returns 0, or -1 with errno set. */
static int make_temporary(const char *dir, char *path, size_t cap)
{
	int fd, err = 0;

	if ((size_t)snprintf(path, cap, "%s/memplan-stats.XXXXXX/" TEMPORARY_NAME, dir) >= cap) {
		errno = ENAMETOOLONG;
		return -1;
	}
	char *slash = strrchr(path, '/');
	*slash = '\0';
	if (!mkdtemp(path))
		return -1;
	if (chmod(path, 0711) < 0) {
		err = errno;
		rmdir(path);
		errno = err;
		return -1;
	}
	*slash = '/';
	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) < 0 ||
	    fchmod(fd, 0622) < 0)
		err = errno;
	else if ((err = posix_fallocate(fd, 0, 4096)) == 0 && ftruncate(fd, 0) < 0)
		err = errno;
	if (fd >= 0)
		close(fd);
	if (err == EOPNOTSUPP || err == EINVAL) /* no room to check: not full */
		err = 0;
	if (err) {
		stats_file_remove(path);
		errno = err;
		return -1;
	}
	return 0;
}

void stats_file_remove(const char *path)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');

	unlink(path);
	if (slash && (size_t)(slash - path) < sizeof(dir)) {
		memcpy(dir, path, (size_t)(slash - path));
		dir[slash - path] = '\0';
		rmdir(dir);
	}
}

/* "memplan: PATH: what" on stderr, the path escaped. */
static void say_about(const char *path, const char *what)
{
	fputs("memplan: ", stderr);
	text_safe_fputs(path, stderr);
	fprintf(stderr, ": %s\n", what);
}

/* Whether the directory that path (absolute) names a file in exists. */
static bool directory_of_exists(const char *path)
{
	char dir[PATH_MAX];
	struct stat st;
	const char *slash = strrchr(path, '/');

	if (!slash || (size_t)(slash - path) >= sizeof(dir))
		return true; /* nothing to tell: writing it will say */
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = '\0';
	return stat(dir[0] ? dir : "/", &st) == 0 && S_ISDIR(st.st_mode);
}

int stats_file_prepare(const char *user_path, char *path, size_t cap, off_t *from,
		       bool *temporary)
{
	struct stat st;

	*from = 0;
	*temporary = false;
	if (user_path) {
		if (launch_absolute_path(user_path, path, cap) < 0) {
			fprintf(stderr, "memplan: %s: path too long\n", user_path);
			return -1;
		}
		const int found = stat(path, &st) == 0 ? 0 : errno;
		if (!found && S_ISREG(st.st_mode)) {
			if (plan_file_starts_as_plan(path)) {
				say_about(user_path,
					  "is a plan; statistics appended to it "
					  "would spoil it (choose another --stats file)");
				return -1;
			}
			*from = st.st_size;
		} else if (found == ENOENT && !directory_of_exists(path)) {
			say_about(user_path, "cannot write statistics: no such directory");
			return -1;
		}
	} else {
		const char *dir = getenv("TMPDIR");
		const bool own_dir = dir && *dir && strcmp(dir, "/tmp") != 0;
		/* A TMPDIR that cannot hold the file (missing, read-only, full)
		 * leaves /tmp: the file is memplan's own, read back and removed
		 * when the command ends. */
		if (!own_dir || make_temporary(dir, path, cap) < 0) {
			const int dir_err = own_dir ? errno : 0;
			if (make_temporary("/tmp", path, cap) < 0) {
				if (dir_err)
					fprintf(
					    stderr,
					    "memplan: %s: cannot make a file for the processes' "
					    "statistics: %s, nor in /tmp: %s\n",
					    dir, strerror(dir_err), strerror(errno));
				else
					fprintf(
					    stderr,
					    "memplan: /tmp: cannot make a file for the processes' "
					    "statistics: %s (TMPDIR names the directory)\n",
					    strerror(errno));
				return -1;
			}
		}
		*temporary = true;
	}
	setenv("MEMPLAN_STATS", path, 1);
	/* Processes that outlive the command (a daemon, `sleep &`) must not make
	 * the removed file again; a user's file is theirs to create. */
	if (*temporary)
		setenv("MEMPLAN_STATS_NO_CREATE", "1", 1);
	else
		unsetenv("MEMPLAN_STATS_NO_CREATE");
	return 0;
}
