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
#include <unistd.h>

#include "launch.h"

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

/* Makes an empty file of our own in dir, its name into path, with room for
 * some lines: on a full file system the empty file is made all the same, and
 * every line written to it later failed. Returns 0, or -1 with errno set. */
static int make_temporary(const char *dir, char *path, size_t cap)
{
	int fd, err;

	if ((size_t)snprintf(path, cap, "%s/memplan-stats.XXXXXX", dir) >= cap) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if ((fd = mkstemp(path)) < 0)
		return -1;
	err = posix_fallocate(fd, 0, 4096);
	if (err == 0)
		err = ftruncate(fd, 0) == 0 ? 0 : errno;
	close(fd);
	if (err == ENOSPC || err == EDQUOT) {
		unlink(path);
		errno = err;
		return -1;
	}
	return 0;
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
		if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
			*from = st.st_size;
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
