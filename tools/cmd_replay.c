/* memplan replay -p PLAN [--stats FILE] [--prefault] -- CMD...
 * Runs CMD with the preload library in replay mode. A plan that cannot be used is
 * reported in one line here, and CMD then runs on plain libc. Exits with CMD's
 * status. */
#define _GNU_SOURCE
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "launch.h"
#include "plan_file.h"
#include "static_exe.h"

/* Prints the usage: to stdout for --help (why NULL; returns 0), else to stderr
 * after the reason, if any (getopt has already named a bad option), returning 2. */
static int usage(const char *why)
{
	FILE *out = why ? stderr : stdout;

	if (why && *why)
		fprintf(stderr, "memplan: replay: %s\n", why);
	fprintf(out,
		"usage: memplan replay -p PLAN [--stats FILE] [--prefault] -- CMD [ARG...]\n");
	return why ? 2 : 0;
}

/* Exports path, made absolute, under name. */
static int set_absolute(const char *name, const char *path)
{
	char abs[PATH_MAX];

	if (launch_absolute_path(path, abs, sizeof(abs)) < 0) {
		fprintf(stderr, "memplan: %s: path too long\n", path);
		return -1;
	}
	setenv(name, abs, 1);
	return 0;
}

/* Whether the statistics lines in the regular file path, from byte from on,
 * show processes of which none found its program in the plan (none with
 * "exe_in_plan":true). False if there are no such lines to go by: a program
 * that closed its stderr cannot write to /dev/stderr, say. */
static bool no_exe_in_plan(const char *path, off_t from)
{
	char *line = NULL;
	size_t cap = 0;
	bool lines = false, found = false;
	struct stat st;
	FILE *f;

	/* Not a pipe or a terminal: reading one would wait for input. */
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || !(f = fopen(path, "re")))
		return false;
	if (fseeko(f, from, SEEK_SET) == 0)
		while (!found && getline(&line, &cap, f) >= 0) {
			lines = true;
			found = strstr(line, "\"exe_in_plan\":true") != NULL;
		}
	free(line);
	fclose(f);
	return lines && !found;
}

/* Runs the command with its statistics going to stats, or to a file of our own
 * if none was asked for, and reads them at the end: if no process found its
 * program in the plan, the plan was recorded from other programs, which no one
 * process can tell (a wrapper such as timeout is in no plan, the program it
 * starts is). Says so once. Returns the command's status. */
static int run_reading_stats(const char *plan, const char *stats, char **command)
{
	char path[PATH_MAX];
	struct stat st;
	off_t from = 0;
	int status;

	if (stats) {
		if (launch_absolute_path(stats, path, sizeof(path)) < 0) {
			fprintf(stderr, "memplan: %s: path too long\n", stats);
			return 1;
		}
		if (stat(path, &st) == 0)
			from = st.st_size;
	} else {
		const char *dir = getenv("TMPDIR");
		int fd = -1;
		if (snprintf(path, sizeof(path), "%s/memplan-stats.XXXXXX",
			     dir && *dir ? dir : "/tmp") < (int)sizeof(path))
			fd = mkstemp(path);
		if (fd < 0)
			return launch_run(command); /* no statistics, no check */
		close(fd);
	}
	setenv("MEMPLAN_STATS", path, 1);
	status = launch_run(command);
	if (no_exe_in_plan(path, from))
		fprintf(stderr,
			"memplan: %s: no process of the command found its program in the plan "
			"(it was recorded from other programs); they ran on libc\n",
			plan);
	if (!stats)
		unlink(path);
	return status;
}

int cmd_replay(int argc, char **argv)
{
	static const struct option options[] = {
	    {"plan", required_argument, NULL, 'p'},
	    {"stats", required_argument, NULL, 's'},
	    {"prefault", no_argument, NULL, 'f'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	const char *plan = NULL, *stats = NULL;
	char why[256];
	void *buf;
	size_t len;
	int c, prefault = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+p:s:fh", options, NULL)) != -1) {
		switch (c) {
		case 'p':
			plan = optarg;
			break;
		case 's':
			stats = optarg;
			break;
		case 'f':
			prefault = 1;
			break;
		case 'h':
			return usage(NULL);
		default:
			return usage("");
		}
	}
	if (!plan)
		return usage("-p PLAN is required");
	if (optind >= argc)
		return usage("no command given");

	/* Check once here, so that a bad plan gives one line, not one per process. */
	if (plan_file_load(plan, &buf, &len, why, sizeof(why)) < 0) {
		fprintf(stderr, "memplan: %s: %s; running on libc\n", plan, why);
		unsetenv("MEMPLAN_MODE");
		return launch_run(argv + optind);
	}
	free(buf);
	setenv("MEMPLAN_MODE", "replay", 1);
	if (set_absolute("MEMPLAN_PLAN", plan) < 0)
		return 1;
	if (prefault)
		setenv("MEMPLAN_PREFAULT", "1", 1);
	/* It writes no statistics either, so the check at the end says nothing. */
	if (static_exe_command(argv[optind]))
		fprintf(stderr,
			"memplan: %s is statically linked: the preload library cannot serve "
			"its allocations; running on its own allocator\n",
			argv[optind]);
	launch_add_preload();
	return run_reading_stats(plan, stats, argv + optind);
}
