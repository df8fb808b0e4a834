/* memplan replay -p PLAN [--stats FILE] [--prefault] [--quiet]
 *                [--strict] [--min-hit-rate PCT] -- CMD...
 * Runs CMD with the preload library in replay mode. A plan that cannot be used is
 * reported in one line here, and CMD then runs on plain libc. When CMD has ended,
 * one line says what replay did (replay_summary.h). Exits with CMD's status;
 * with --strict, 1 instead of 0 when the plan could not be used or served too
 * little. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "decimal_text.h"
#include "cli_args.h"
#include "commands.h"
#include "image_match.h"
#include "launch.h"
#include "plan_file.h"
#include "replay_summary.h"
#include "command_exe.h"
#include "stats_lines.h"
#include "stdout_end.h"
#include "text_safe.h"

/* An image served less than this share, without --min-hit-rate, is named in
 * the summary as poorly served. */
#define POOR_SHARE_PCT 50.0

/* Prints the usage: to stdout for --help (why NULL; returns 0), else to stderr
 * after the reason, if any (getopt has already named a bad option), returning 2. */
static int usage(const char *why)
{
	FILE *out = why ? stderr : stdout;

	if (why && *why)
		fprintf(stderr, "memplan: replay: %s\n", why);
	fprintf(out, "usage: memplan replay -p PLAN [--stats FILE] [--prefault] [--quiet]\n"
		     "                      [--strict] [--min-hit-rate PCT] [--wait-left S]\n"
		     "                      -- CMD [ARG...]\n");
	if (why)
		return 2;
	fprintf(
	    out,
	    "\n"
	    "Runs CMD with each process image's allocations served from the arena its\n"
	    "plan lays out, and the rest from libc. Each process finds the image of the\n"
	    "plan recorded for its executable and arguments, else the one of its\n"
	    "executable with the nearest arguments. When CMD has ended, one line on\n"
	    "stderr gives the share of allocations served, the arena, and the process\n"
	    "images that had no plan or a poor one, and why (for one poorly served,\n"
	    "the call site that missed most). Exits with CMD's status.\n"
	    "\n"
	    "options:\n"
	    "  -p, --plan PLAN       the plan file, written by memplan record (required)\n"
	    "  -s, --stats FILE      append one JSON line of statistics per process image\n"
	    "                        to FILE; -: to standard output once the command has\n"
	    "                        ended (default: kept in a temporary file, for the\n"
	    "                        summary, then removed)\n"
	    "  -f, --prefault        touch the whole arena at start-up, so the run takes\n"
	    "                        no page faults in it (default: off)\n"
	    "  -q, --quiet           no summary line at the end (default: off; problems\n"
	    "                        are still reported)\n"
	    "  --strict              exit 1 instead of 0 if the plan could not be used,\n"
	    "                        if no process found its program in it, or if the\n"
	    "                        share served is under --min-hit-rate (default: off;\n"
	    "                        CMD's own failure status is kept)\n"
	    "  --min-hit-rate PCT    the least share of allocations, in percent, that\n"
	    "                        must be served from the arena; implies --strict\n"
	    "                        (default: 0)\n"
	    "  -w, --wait-left S     once CMD has ended, how long to wait for the\n"
	    "                        processes it left running (background jobs,\n"
	    "                        daemons), whose statistics are part of the\n"
	    "                        summary, in seconds, from 0 to 86400 (default %.0f)\n"
	    "  -h, --help            this help\n"
	    "\n"
	    "examples:\n"
	    "  memplan replay -p app.plan -- ./app in.txt\n"
	    "  memplan replay -p app.plan --strict --min-hit-rate 90 --stats s.jsonl -- ./app\n",
	    LAUNCH_WAIT_LEFT_SECONDS);
	return 0;
}

static void free_exes(struct replay_plan_exe *exes, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		free(exes[i].name);
		free(exes[i].path);
	}
	free(exes);
}

/* The executables the plan has images of, each file name once, for the
 * summary (another build of a program, or no image of it), escaped as the
 * summary's own names are (text_safe.h). Copied: the plan is not kept mapped
 * while the command runs. Returns NULL if out of memory. */
static struct replay_plan_exe *plan_exes(const void *buf, size_t *count)
{
	uint32_t n = plan_file_header(buf)->image_count;
	struct replay_plan_exe *exes = calloc(n ? n : 1, sizeof(*exes));

	*count = 0;
	for (uint32_t i = 0; exes && i < n; i++) {
		struct plan_image im;
		plan_file_image(buf, i, &im);
		char *name = text_safe_dup(image_match_exe_name(&im));
		if (!name)
			goto err_free;
		size_t k = 0;
		while (k < *count && strcmp(exes[k].name, name))
			k++;
		const bool by_path = plan_image_exe_by_path(&im);
		if (k < *count) {
			free(name);
			exes[k].by_path &= by_path;
			continue;
		}
		exes[k].name = name;
		exes[k].by_path = by_path;
		exes[k].path = text_safe_dup(im.strings + im.record.exe_path_offset);
		*count = k + 1;
		if (!exes[k].path)
			goto err_free;
	}
	return exes;

err_free:
	free_exes(exes, *count);
	*count = 0;
	return NULL;
}

struct replay_options {
	const char *plan, *stats;
	const char *plan_name; /* plan, escaped for messages (text_safe.h) */
	const char *command_name; /* the command's, the same */
	double wait_left;
	bool quiet, strict;
	double min_hit_pct;
	struct replay_plan_exe *exes;
	size_t exe_count;
	struct stat plan_identity; /* the plan file exes are of */
};

/* Whether the plan file is another than the one exes were read from,
 * or gone: rewritten or replaced while the command ran (a new recording, a
 * copy), it has another inode, size, mtime or ctime. */
static bool plan_changed(const struct replay_options *o)
{
	const struct stat *was = &o->plan_identity;
	struct stat now;

	return stat(o->plan, &now) != 0 || now.st_dev != was->st_dev || now.st_ino != was->st_ino ||
	       now.st_size != was->st_size || now.st_mtim.tv_sec != was->st_mtim.tv_sec ||
	       now.st_mtim.tv_nsec != was->st_mtim.tv_nsec ||
	       now.st_ctim.tv_sec != was->st_ctim.tv_sec ||
	       now.st_ctim.tv_nsec != was->st_ctim.tv_nsec;
}

/* With --strict: says why the run fails the check, in one line. */
static void strict_failure(const struct replay_options *o, const char *why, int status)
{
	/* A command that failed keeps its own status, which says more. */
	if (status)
		fprintf(stderr,
			"memplan: %s: --strict: %s; the command's own exit status, %d, stands\n",
			o->plan_name, why, status);
	else
		fprintf(stderr, "memplan: %s: --strict: %s; exit status 1\n", o->plan_name, why);
}

/* Names the call site that missed most in each poorly served image, from the
 * plan as it is now: the plan is not kept mapped while the command runs, and
 * is mapped again only for this. Naming is best effort: a plan that cannot be
 * mapped again leaves the summary without names. */
static void name_missed_sites(const struct replay_options *o, struct replay_summary *s)
{
	const double poor_pct = o->min_hit_pct > 0 ? o->min_hit_pct : POOR_SHARE_PCT;
	const void *buf;
	size_t len;
	char why[256];

	if (!replay_summary_has_sites(s, poor_pct) ||
	    plan_file_map(o->plan, &buf, &len, why, sizeof(why)) < 0)
		return;
	replay_summary_name_sites(s, buf, poor_pct);
	plan_file_unmap((void *)buf, len);
}

/* The signal that ended the command, or that its status says ended a process
 * it waited for (a wrapper such as timeout exits 128 + the signal); 0 if
 * none. */
static int killed_by(int status)
{
	if (launch_signal())
		return launch_signal();
	return status > 128 && status - 128 < NSIG ? status - 128 : 0;
}

/* If the statistics file is memplan's own stderr (--stats /dev/stderr with
 * 2>file), its processes appended their lines there by descriptors of their
 * own, past the offset stderr's descriptor still has: what memplan says next
 * would go over them. Moves that offset to the end. */
static void after_appends_to_stderr(const char *stats_path)
{
	struct stat err, stats;

	if (fstat(STDERR_FILENO, &err) == 0 && S_ISREG(err.st_mode) &&
	    stat(stats_path, &stats) == 0 && stats.st_dev == err.st_dev &&
	    stats.st_ino == err.st_ino)
		lseek(STDERR_FILENO, 0, SEEK_END);
}

/* Writes the file at path to standard output. Returns 0, -1 with errno, or
 * STDOUT_END_READER_GONE (stdout_end.h). */
static int copy_to_stdout(const char *path)
{
	char buf[65536];
	size_t n;
	FILE *in = fopen(path, "re");

	if (!in)
		return -1;
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, n, stdout) != n)
			break;
	const bool read_failed = ferror(in);
	fclose(in);
	const int end = stdout_end(stdout);
	if (!end && read_failed) {
		errno = EIO;
		return -1;
	}
	return end;
}

/* Runs the command with its statistics going to stats, or to a file of our own
 * if none was asked for, and reads them at the end for the summary line. If no
 * process found its program in the plan, the plan was recorded from other
 * programs, or from another build of one (a file of the same name), which no
 * one process can tell (a wrapper such as timeout is in no plan, the program it
 * starts is): that is said instead, even with --quiet. Lines are only read
 * from a regular file: a program that closed its stderr cannot write to
 * /dev/stderr, say, and a pipe would wait. Returns the command's status, or 1
 * for a command that succeeded but fails --strict. */
static int run_reading_stats(const struct replay_options *o, char **command)
{
	struct replay_summary s;
	char path[PATH_MAX];
	bool temporary, failed = false;
	off_t from;
	int status, lines;

	/* "-": the lines go to memplan's own standard output once the command has
	 * ended, from a file of ours. /dev/stdout, opened by each process for
	 * appending, is the command's output: a file there took the lines at
	 * its end, and the program's last write then went over them. */
	const bool to_stdout = o->stats && !strcmp(o->stats, "-");
	if (stats_file_prepare(to_stdout ? NULL : o->stats, path, sizeof(path), &from, &temporary) <
	    0) {
		if (o->stats)
			return 1;
		status = launch_run(command); /* no statistics to judge by */
		if (o->strict && status == 0) {
			strict_failure(o, "no statistics file could be made to judge the run by", status);
			return 1;
		}
		return status;
	}
	/* The processes the command leaves running (a script's job &) write
	 * their lines as they end: waited for, as record waits for their plans. */
	launch_adopt_left();
	status = launch_run(command);
	char left[256];
	const unsigned still =
	    launch_wait_for_left(o->wait_left, o->command_name,
				 "its statistics are part of the summary", left, sizeof(left));
	if (still)
		fprintf(stderr,
			"memplan: %s, left running by %s, %s on: %s statistics are not in this "
			"summary\n",
			left, o->command_name, still > 1 ? "go" : "goes",
			still > 1 ? "their" : "its");
	lines = replay_summary_read(path, from, &s);
	after_appends_to_stderr(path);
	const int copied = to_stdout ? copy_to_stdout(path) : 0;
	if (copied < 0)
		fprintf(stderr, "memplan: cannot write the statistics to standard output: %s\n",
			strerror(errno));
	if (temporary)
		stats_file_remove(path);
	/* The names of a plan that changed meanwhile are not what the command's
	 * processes read: "another build in the plan" would be a guess. */
	const bool changed = plan_changed(o);
	const struct replay_plan_exe *exes = changed ? NULL : o->exes;
	const size_t exe_count = changed ? 0 : o->exe_count;
	if (lines == -ENOMEM) {
		fprintf(stderr, "memplan: out of memory\n");
		return status ? status : 1;
	}
	if (lines < 0) {
		if (o->strict) {
			failed = true;
			strict_failure(o, "the statistics file is not a regular file, so the share "
					  "served cannot be read back", status);
		}
	} else if (killed_by(status) && !s.any_in_plan) {
		/* SIGKILL ends a process before it can write its statistics: its
		 * program may well be in the plan. */
		fprintf(stderr,
			"memplan: %s: the command was killed (signal %d) before any process "
			"of it in the plan wrote its statistics\n",
			o->plan_name, killed_by(status));
		if (o->strict) {
			failed = true;
			strict_failure(o, "no process of the command wrote its statistics", status);
		}
	} else if (lines > 0 && !s.any_in_plan && !s.unreadable) {
		const struct replay_plan_exe *rebuilt =
		    replay_summary_other_build(&s, exes, exe_count);
		if (changed)
			fprintf(stderr,
				"memplan: %s: no process of the command found its program in "
				"the plan, which changed during the run; they ran on libc\n",
				o->plan_name);
		/* Without a build-id, the same binary copied elsewhere is as
		 * foreign to the plan as a rebuilt one, and says so. */
		else if (rebuilt && rebuilt->by_path)
			fprintf(stderr,
				"memplan: %s: no process of the command found its program in "
				"the plan (%s was recorded at %s without a build-id, so only "
				"a run from that path finds its plan: record it again); they "
				"ran on libc\n",
				o->plan_name, rebuilt->name, rebuilt->path);
		else if (rebuilt)
			fprintf(stderr,
				"memplan: %s: no process of the command found its program in "
				"the plan (it holds another build of %s: record it again); "
				"they ran on libc\n",
				o->plan_name, rebuilt->name);
		else if (s.under_valgrind)
			fprintf(stderr,
				"memplan: %s: no process of the command was served: a program "
				"valgrind runs under a tool that keeps its own allocator "
				"(memcheck, massif...) is left to it\n",
				o->plan_name);
		else
			fprintf(stderr,
				"memplan: %s: no process of the command found its program in "
				"the plan (it was recorded from other programs); they ran on "
				"libc\n",
				o->plan_name);
		if (o->strict) {
			failed = true;
			strict_failure(o,
				       s.under_valgrind
					   ? "no process was served (a valgrind tool kept its program)"
					   : "no process found its program in the plan",
				       status);
		}
	} else if (lines > 0) {
		if (!o->quiet) {
			name_missed_sites(o, &s);
			replay_summary_print(stderr, &s, exes, exe_count,
					     o->min_hit_pct > 0 ? o->min_hit_pct : POOR_SHARE_PCT);
		}
		if (changed)
			fprintf(stderr, "memplan: %s: the plan changed during the run\n",
				o->plan_name);
		if (o->strict && s.unreadable) {
			/* As a plan that cannot be used at the start. */
			failed = true;
			strict_failure(o,
				       s.unreadable == 1
					   ? "a process of the command could not read the plan"
					   : "processes of the command could not read the plan",
				       status);
		} else if (o->strict && replay_summary_share(&s) < o->min_hit_pct) {
			char why[128], pct[16], limit[32];
			replay_summary_share_text(&s, pct, sizeof(pct));
			snprintf(why, sizeof(why), "%s served, under --min-hit-rate %s", pct,
				 decimal_text_format(limit, sizeof(limit), o->min_hit_pct));
			failed = true;
			strict_failure(o, why, status);
		}
	} else if (o->strict) {
		/* Silent otherwise: a process that could open no file (its
		 * descriptors used up) runs on as it would, without a word. */
		failed = true;
		strict_failure(o, "no process of the command wrote its statistics", status);
	}
	replay_summary_free(&s);
	if (failed && status == 0)
		return 1;
	/* As the command would end, writing there. */
	return copied == STDOUT_END_READER_GONE && status == 0 ? copied : status;
}

int cmd_replay(int argc, char **argv)
{
	enum { OPT_STRICT = 256, OPT_MIN_HIT_RATE };
	static const struct option options[] = {
	    {"plan", required_argument, NULL, 'p'},
	    {"stats", required_argument, NULL, 's'},
	    {"prefault", no_argument, NULL, 'f'},
	    {"quiet", no_argument, NULL, 'q'},
	    {"strict", no_argument, NULL, OPT_STRICT},
	    {"min-hit-rate", required_argument, NULL, OPT_MIN_HIT_RATE},
	    {"wait-left", required_argument, NULL, 'w'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	struct replay_options o = {.wait_left = LAUNCH_WAIT_LEFT_SECONDS};
	char why[256];
	const void *buf;
	size_t len;
	int c, prefault = 0, status;

	optind = 1;
	while ((c = cli_getopt(argc, argv, "+p:s:w:fqh", options)) != -1) {
		switch (c) {
		case 'p':
			o.plan = optarg;
			break;
		case 's':
			o.stats = optarg;
			break;
		case 'f':
			prefault = 1;
			break;
		case 'q':
			o.quiet = true;
			break;
		case OPT_STRICT:
			o.strict = true;
			break;
		case OPT_MIN_HIT_RATE:
			if (cli_parse_percent(optarg, &o.min_hit_pct) < 0 || o.min_hit_pct > 100)
				return usage("--min-hit-rate takes a percentage from 0 to 100");
			o.strict = true;
			break;
		case 'w':
			if (cli_parse_decimal(optarg, &o.wait_left) < 0 || o.wait_left > 86400)
				return usage("--wait-left takes seconds from 0 to 86400");
			break;
		case 'h':
			return usage(NULL);
		default:
			return usage("");
		}
	}
	if (!o.plan) {
		const char *stray = cli_stray_word(argc, argv, optind);
		char message[PATH_MAX + 64];
		snprintf(message, sizeof(message), "-p PLAN is required%s%s%s",
			 stray ? " (did you mean -p " : "", stray ? stray : "", stray ? "?)" : "");
		return usage(message);
	}
	if (!*o.plan)
		return usage("-p names no file (an empty path)");
	if (optind >= argc)
		return usage("no command given");
	o.plan_name = text_safe_dup(o.plan);
	o.command_name = text_safe_dup(argv[optind]);
	if (!o.plan_name || !o.command_name)
		o.plan_name = o.plan, o.command_name = argv[optind];
	/* memplan judges the command as a whole: no process of it must judge itself. */
	unsetenv("MEMPLAN_STRICT");
	unsetenv("MEMPLAN_MIN_HIT_RATE");

	/* Check once here, so that a bad plan gives one line, not one per process. */
	if (plan_file_map(o.plan, &buf, &len, why, sizeof(why)) < 0) {
		fprintf(stderr, "memplan: %s: %s; running on libc\n", o.plan_name, why);
		unsetenv("MEMPLAN_MODE");
		status = launch_run(argv + optind);
		if (o.strict && status == 0) {
			strict_failure(&o, "the plan could not be used", status);
			return 1;
		}
		return status;
	}
	const uint64_t record_id = plan_file_header(buf)->record_id;
	o.exes = plan_exes(buf, &o.exe_count);
	plan_file_unmap((void *)buf, len);
	if (stat(o.plan, &o.plan_identity) != 0)
		memset(&o.plan_identity, 0, sizeof(o.plan_identity));
	if (!o.exes) {
		fprintf(stderr, "memplan: out of memory\n");
		return 1;
	}
	char abs[PATH_MAX];
	if (launch_absolute_path(o.plan, abs, sizeof(abs)) < 0) {
		fprintf(stderr, "memplan: %s: path too long\n", o.plan_name);
		return 1;
	}
	launch_set_mode("replay", abs, record_id);
	if (prefault)
		setenv("MEMPLAN_PREFAULT", "1", 1);
	else
		unsetenv("MEMPLAN_PREFAULT"); /* --prefault decides, as for record's options */
	char runtime[128];
	const enum command_exe kind = command_exe_kind(argv[optind], runtime, sizeof(runtime));
	if (kind != COMMAND_EXE_SANITIZED && kind != COMMAND_EXE_OTHER_LIBC)
		launch_add_preload();
	if (kind == COMMAND_EXE_OTHER_LIBC || kind == COMMAND_EXE_SANITIZED) {
		/* Preloaded, another C library's loader would refuse to start it,
		 * AddressSanitizer too, and the other sanitizers would not see the
		 * blocks memplan served. */
		const bool other_libc = kind == COMMAND_EXE_OTHER_LIBC;
		fprintf(stderr,
			other_libc ? "memplan: %s is run by another C library's loader (%s), which "
				     "cannot load memplan's library; running it without memplan\n"
				   : "memplan: %s is built with a sanitizer (%s), whose allocator "
				     "memplan cannot stand in for; running it without memplan\n",
			argv[optind], runtime);
		status = launch_run(argv + optind);
		if (o.strict && status == 0) {
			strict_failure(&o,
				       other_libc
					   ? "a command of another C library cannot be served"
					   : "a command built with a sanitizer cannot be served",
				       status);
			status = 1;
		}
	} else if (kind == COMMAND_EXE_STATIC || kind == COMMAND_EXE_SETID) {
		/* It writes no statistics either: there is nothing to sum up. */
		const bool setid = kind == COMMAND_EXE_SETID;
		fprintf(stderr,
			"memplan: %s is %s: the preload library cannot serve its allocations; "
			"running on its own allocator\n",
			argv[optind],
			setid ? "set-user-ID or set-group-ID (the loader ignores LD_PRELOAD)"
			      : "statically linked");
		status = launch_run(argv + optind);
		if (o.strict && status == 0) {
			strict_failure(&o, setid ? "a set-user-ID command cannot be served"
						 : "a statically linked command cannot be served", status);
			status = 1;
		}
	} else {
		status = run_reading_stats(&o, argv + optind);
	}
	free_exes(o.exes, o.exe_count);
	return status;
}
