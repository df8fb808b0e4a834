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
#include "stats_lines.h"

/* Prints the usage: to stdout for --help (why NULL; returns 0), else to stderr
 * after the reason, if any (getopt has already named a bad option), returning 2. */
static int usage(const char *why)
{
	FILE *out = why ? stderr : stdout;

	if (why && *why)
		fprintf(stderr, "memplan: replay: %s\n", why);
	fprintf(out,
		"usage: memplan replay -p PLAN [--stats FILE] [--prefault] -- CMD [ARG...]\n");
	if (why)
		return 2;
	fprintf(out, "Runs CMD with each process image's allocations served from the arena its\n"
		     "plan lays out (the rest from libc). Exits with CMD's status.\n"
		     "  -p, --plan PLAN   the plan file (required)\n"
		     "  --stats FILE      append one JSON line of statistics per process image\n"
		     "                    (default: none kept)\n"
		     "  --prefault        touch the whole arena at start-up (default: off)\n"
		     "example: memplan replay -p app.plan --stats stats.jsonl -- ./app in.txt\n");
	return 0;
}

static void note_exe_in_plan(const struct stats_line *line, void *found)
{
	if (line->exe_in_plan)
		*(bool *)found = true;
}

/* Runs the command with its statistics going to stats, or to a file of our own
 * if none was asked for, and reads them at the end: if no process found its
 * program in the plan, the plan was recorded from other programs, which no one
 * process can tell (a wrapper such as timeout is in no plan, the program it
 * starts is). Says so once. Lines are only read from a regular file: a program
 * that closed its stderr cannot write to /dev/stderr, say, and a pipe would wait.
 * Returns the command's status. */
static int run_reading_stats(const char *plan, const char *stats, char **command)
{
	char path[PATH_MAX];
	bool temporary, found = false;
	off_t from;
	int status;

	if (stats_file_prepare(stats, path, sizeof(path), &from, &temporary) < 0)
		return stats ? 1 : launch_run(command); /* no statistics, no check */
	status = launch_run(command);
	if (stats_lines_read(path, from, note_exe_in_plan, &found) > 0 && !found)
		fprintf(stderr,
			"memplan: %s: no process of the command found its program in the plan "
			"(it was recorded from other programs); they ran on libc\n",
			plan);
	if (temporary)
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
	const void *buf;
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
	if (plan_file_map(plan, &buf, &len, why, sizeof(why)) < 0) {
		fprintf(stderr, "memplan: %s: %s; running on libc\n", plan, why);
		unsetenv("MEMPLAN_MODE");
		return launch_run(argv + optind);
	}
	const uint64_t record_id = plan_file_header(buf)->record_id;
	plan_file_unmap((void *)buf, len);
	char abs[PATH_MAX];
	if (launch_absolute_path(plan, abs, sizeof(abs)) < 0) {
		fprintf(stderr, "memplan: %s: path too long\n", plan);
		return 1;
	}
	launch_set_mode("replay", abs, record_id);
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
