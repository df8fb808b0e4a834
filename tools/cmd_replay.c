/* memplan replay -p PLAN [--stats FILE] [--prefault] -- CMD...
 * Runs CMD with the preload library in replay mode. A plan that cannot be used is
 * reported in one line here, and CMD then runs on plain libc. Exits with CMD's
 * status. */
#define _GNU_SOURCE
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
	/* The command is the process a plan for other programs is reported by
	 * (replay.c), even when this replay runs inside another one. */
	unsetenv("MEMPLAN_REPLAY_TOP");
	if (set_absolute("MEMPLAN_PLAN", plan) < 0 ||
	    (stats && set_absolute("MEMPLAN_STATS", stats) < 0))
		return 1;
	if (prefault)
		setenv("MEMPLAN_PREFAULT", "1", 1);
	if (static_exe_command(argv[optind]))
		fprintf(stderr,
			"memplan: %s is statically linked: the preload library cannot serve "
			"its allocations; running on its own allocator\n",
			argv[optind]);
	launch_add_preload();
	return launch_run(argv + optind);
}
