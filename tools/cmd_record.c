/* memplan record -o PLAN [--depth N] [--plan-seconds S] [--wait-left S] -- CMD...
 * Runs CMD with the preload library in record mode; every process image that
 * allocates adds its image to PLAN at its exit, packed by the online allocator
 * only (the recording id says that the planner runs here, later:
 * PLAN_RECORD_ID_REPLANNED). Once CMD has ended, and the processes it left
 * running too (or the wait for them is over), the plan's frames are
 * symbolised (libc's debug information read while CMD ran: symbol_warmer.h),
 * its images re-planned within S seconds as a whole (plan_replan.h), and both
 * are stored in it in one write (plan_symbolize.h). Exits with CMD's status. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "atomic_file.h"
#include "cli_args.h"
#include "commands.h"
#include "config.h"
#include "deep_stack.h"
#include "file_io.h"
#include "launch.h"
#include "output_target.h"
#include "plan_file.h"
#include "plan_replan.h"
#include "plan_symbolize.h"
#include "record_claim.h"
#include "symbol_warmer.h"
#include "symbolize.h"
#include "command_exe.h"
#include "stats_lines.h"
#include "text_safe.h"

/* The planner's budget once the command has ended, for all its images: about
 * what two million blocks need to come within a percent or two of their lower
 * bound, and most plans need far less (it stops within RECORD_PLAN_SLACK, or
 * RECORD_PLAN_SLACK_BYTES for a small one). */
#define RECORD_PLAN_SECONDS 5.0
#define RECORD_PLAN_SLACK   0.01
#define RECORD_PLAN_SLACK_BYTES (16u * 1024)
/* How long to wait, once CMD has ended, for the processes it left running (a
 * script's background job): their plans are part of the recording, and only
 * the plan written here is re-planned and symbolised. Bounded, so that a
 * daemon the command started (a build server) does not hold a recording in a
 * script for ever. */

/* Prints the usage: to stdout for --help (why NULL; returns 0), else to stderr
 * after the reason, if any (getopt has already named a bad option), returning 2. */
static int usage(const char *why)
{
	FILE *out = why ? stderr : stdout;

	if (why && *why)
		fprintf(stderr, "memplan: record: %s\n", why);
	fprintf(out,
		"usage: memplan record -o PLAN [--depth N] [--plan-seconds S] [--wait-left S]\n"
		"                      -- CMD [ARG...]\n");
	if (why)
		return 2;
	fprintf(out,
		"\n"
		"Runs CMD with every allocation of each of its process images recorded (each\n"
		"program CMD runs, children of a shell script, make or gcc included, is an\n"
		"image of its own), and writes their plans to PLAN; once CMD has ended,\n"
		"re-plans them for the smallest arena and stores the symbols of the plan's\n"
		"call sites in it, so that it stays readable after the binaries change.\n"
		"CMD's output is left untouched. Exits with CMD's status; if no plan was\n"
		"written, it says why, and that a plan already there is kept as it was.\n"
		"\n"
		"options:\n"
		"  -o, --output PLAN      the plan file to write (required); a plan already\n"
		"                         there is replaced (through a symbolic link: the\n"
		"                         file it names)\n"
		"  -d, --depth N          frames per call site, 1 to 64 (default %d)\n"
		"  -s, --plan-seconds S   planning time once CMD has ended, for all its\n"
		"                         process images together, in seconds, from 0 to\n"
		"                         3600 (default %.0f; 0: the quick heuristics\n"
		"                         only); it ends as soon as each image is within\n"
		"                         1%% or 16 KiB of its lower bound\n"
		"  -w, --wait-left S      once CMD has ended, how long to wait for the\n"
		"                         processes it left running (background jobs,\n"
		"                         daemons), whose plans are part of PLAN, in\n"
		"                         seconds, from 0 to 86400 (default %.0f); one\n"
		"                         still running then adds its plan when it ends,\n"
		"                         packed but not re-planned\n"
		"  -h, --help             this help\n"
		"\n"
		"example:\n"
		"  memplan record -o app.plan -- ./app --test-input in.txt\n",
		MEMPLAN_DEFAULT_DEPTH, RECORD_PLAN_SECONDS, LAUNCH_WAIT_LEFT_SECONDS);
	return 0;
}

/* What the command's processes said of their plans (statistics lines). */
struct outcome {
	const char *output;
	unsigned written, failed;
	unsigned refused; /* by a sandbox the process ran in, without a word */
};

/* Counts a process's outcome; says why it wrote no plan if it could not (it
 * had closed its stderr). */
static void note_outcome(const struct stats_line *line, void *ctx)
{
	struct outcome *seen = ctx;

	if (line->has_written && line->written) {
		seen->written++;
	} else if (line->has_written && line->sandboxed && !line->said) {
		seen->refused++;
	} else if (line->has_written) {
		seen->failed++;
		if (!line->said) {
			fprintf(stderr, "memplan: %s: cannot write the plan of ", seen->output);
			text_safe_fputs(line->exe, stderr);
			fprintf(stderr, " (pid %llu): ", (unsigned long long)line->pid);
			text_safe_fputs(line->error, stderr);
			fputc('\n', stderr);
		}
	}
}

/* Why the plan file at path cannot be opened now, if for want of
 * descriptors (ulimit -n, whose hard limit memplan cannot raise): EMFILE or
 * ENFILE; else 0. The command's processes may have written it all the same. */
static int out_of_descriptors(const char *path)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	return errno == EMFILE || errno == ENFILE ? errno : 0;
}

/* For a message that no plan was written: what the file at path is now. */
static const char *left_as_it_was(const char *path)
{
	return access(path, F_OK) == 0 ? "; the plan already there is left as it was" : "";
}

/* Re-plans the images of the plan at path, if it is still the recording id's,
 * without its lock (the results go in under it, plan_symbolize_file). Returns 0
 * (also for another recording's plan) or a negative errno with why. */
static int replan_plan(const char *path, uint64_t id, double seconds, struct plan_replan *replan,
		       char *why, size_t why_len)
{
	struct replan_options opt = {.budget_s = seconds,
				     .slack = RECORD_PLAN_SLACK,
				     .slack_bytes = RECORD_PLAN_SLACK_BYTES};
	struct replan_summary sum;
	const void *buf;
	size_t len;
	int r;

	r = plan_file_map(path, &buf, &len, why, why_len);
	if (r < 0)
		return r;
	if (plan_file_header(buf)->record_id == id)
		r = plan_replan_run(replan, buf, &opt, &sum, why, why_len);
	plan_file_unmap((void *)buf, len);
	return r;
}

static void warm_symbols(void *warmer)
{
	symbol_warmer_start(warmer);
}

/* Waits up to seconds for the processes that cmd left running
 * (launch_wait_for_left), and names those still running when the wait is
 * over. */
static void wait_for_left(const char *output, const char *cmd, double seconds)
{
	char what[256];
	const unsigned n = launch_wait_for_left(
	    seconds, cmd, "its allocations are part of the plan", what, sizeof(what));

	if (!n)
		return;
	fprintf(stderr,
		"memplan: %s: %s, left running by %s, %s on: %s plan%s added when %s, "
		"packed but not re-planned (then: memplan plan %s -o %s)\n",
		output, what, cmd, n > 1 ? "go" : "goes", n > 1 ? "their" : "its",
		n > 1 ? "s are" : " is", n > 1 ? "they end" : "it ends", output, output);
}

/* Reads a number of seconds from 0 to max into *out; false if text is none. */
static bool seconds_arg(const char *text, double max, double *out)
{
	double v;

	if (cli_parse_decimal(text, &v) < 0 || v > max)
		return false;
	*out = v;
	return true;
}

/* A plan its processes wrote completely, to finish. */
struct finishing {
	const char *plan, *output;
	uint64_t id;
	double plan_seconds;
	struct symbolizer *sym; /* taken */
};

/* The plan is complete as the processes wrote it; failing to improve it or
 * add symbols costs arena or readability, not the recording. The symbols
 * first, from the debug information read while the command ran, which is
 * given back before the planner runs: held together, they would add up in
 * memplan's resident set. On a stack of its own (deep_stack.h). */
static int finish_plan(void *p)
{
	const struct finishing *f = p;
	struct plan_symbols found = {0};
	struct plan_replan replan = {0};
	char why[256];

	if (f->sym && plan_symbols_find(f->plan, f->id, f->sym, &found, why, sizeof(why)) < 0)
		fprintf(stderr, "memplan: %s: %s\n", f->output, why);
	symbolizer_free(f->sym);
	int r = replan_plan(f->plan, f->id, f->plan_seconds, &replan, why, sizeof(why));
	/* Out of memory (memplan runs under the command's limits) leaves the plan
	 * as its processes packed it, which is no error of the recording; an
	 * invalid layout from the planner is one. */
	if (r < 0 && r != -ENOMEM)
		fprintf(stderr, "memplan: %s: cannot re-plan it: %s\n", f->output, why);
	if (plan_symbolize_file(f->plan, f->id, &found, &replan, why, sizeof(why)) < 0)
		fprintf(stderr, "memplan: %s: %s\n", f->output, why);
	plan_symbols_free(&found);
	plan_replan_free(&replan);
	return 0;
}

int cmd_record(int argc, char **argv)
{
	static const struct option options[] = {
	    {"output", required_argument, NULL, 'o'},
	    {"depth", required_argument, NULL, 'd'},
	    {"plan-seconds", required_argument, NULL, 's'},
	    {"wait-left", required_argument, NULL, 'w'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	const char *output = NULL, *depth = NULL;
	double plan_seconds = RECORD_PLAN_SECONDS, wait_left = LAUNCH_WAIT_LEFT_SECONDS;
	char plan[PATH_MAX];
	struct timespec now;
	int c, r, status, err;

	optind = 1;
	while ((c = cli_getopt(argc, argv, "+o:d:s:w:h", options)) != -1) {
		switch (c) {
		case 'o':
			output = optarg;
			break;
		case 'd': {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (*end || v < 1 || v > 64)
				return usage("--depth takes a whole number from 1 to 64");
			depth = optarg;
			break;
		}
		case 's':
			if (!seconds_arg(optarg, 3600, &plan_seconds))
				return usage("--plan-seconds takes seconds from 0 to 3600");
			break;
		case 'w':
			if (!seconds_arg(optarg, 86400, &wait_left))
				return usage("--wait-left takes seconds from 0 to 86400");
			break;
		case 'h':
			return usage(NULL);
		default:
			return usage("");
		}
	}
	if (!output) {
		const char *stray = cli_stray_word(argc, argv, optind);
		char why[PATH_MAX + 64];
		snprintf(why, sizeof(why), "-o PLAN is required%s%s%s",
			 stray ? " (did you mean -o " : "", stray ? stray : "", stray ? "?)" : "");
		return usage(why);
	}
	if (!strcmp(output, "-"))
		return usage("a plan is binary and goes to a file, not to stdout (-o -)");
	if (!*output)
		return usage("-o names no file (an empty path)");
	if (optind >= argc)
		return usage("no command given");

	/* Messages name the plan and the command as given, escaped (text_safe.h):
	 * a newline in a path would split memplan's one line. */
	const char *given = output, *cmd = text_safe_dup(argv[optind]);
	output = text_safe_dup(given);
	if (!output || !cmd)
		output = given, cmd = argv[optind];

	char target[PATH_MAX];
	r = output_target(given, target, sizeof(target));
	if (r < 0) {
		fprintf(stderr, "memplan: %s: %s\n", output, strerror(-r));
		return 1;
	}
	if (launch_absolute_path(target, plan, sizeof(plan)) < 0) {
		fprintf(stderr, "memplan: %s: path too long\n", output);
		return 1;
	}
	r = file_check_regular_or_absent(plan);
	if (r == 0)
		r = atomic_file_check_writable(plan);
	if (r < 0) {
		fprintf(stderr, "memplan: %s: cannot write here: %s\n", output,
			r == -EINVAL ? "not a regular file" : strerror(-r));
		return 1;
	}
	if (!plan_file_may_replace(plan)) {
		fprintf(stderr, PLAN_OUTPUT_NOT_PLAN, output);
		return 1;
	}
	/* Held until memplan exits: the processes of the command write into
	 * the plan as they end, and memplan itself after the command. */
	if (record_claim(plan) == -EBUSY) {
		fprintf(stderr,
			"memplan: %s: another memplan record is writing this plan now; wait "
			"for it, or choose another -o\n",
			output);
		return 1;
	}
	char runtime[128];
	const enum command_exe kind = command_exe_kind(argv[optind], runtime, sizeof(runtime));
	if (kind == COMMAND_EXE_SANITIZED || kind == COMMAND_EXE_OTHER_LIBC) {
		fprintf(stderr,
			kind == COMMAND_EXE_SANITIZED
			    ? "memplan: %s is built with a sanitizer (%s), whose allocator memplan "
			      "cannot stand in for: record a build without -fsanitize\n"
			    : "memplan: %s is run by another C library's loader (%s), which cannot "
			      "load memplan's library: record a build linked against glibc\n",
			cmd, runtime);
		return 1;
	}

	if (launch_check_record_module() < 0)
		return 1;

	clock_gettime(CLOCK_REALTIME, &now);
	/* Its processes leave the planning to replan_plan (plan_file.h). */
	const uint64_t id = (((uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec) ^
			     ((uint64_t)getpid() << 40)) |
			    PLAN_RECORD_ID_REPLANNED;
	launch_set_mode("record", plan, id);
	/* The options decide, not what the user's environment holds for the raw
	 * form (MEMPLAN_DEPTH=2 once overrode the default of --depth quietly). */
	if (depth)
		setenv("MEMPLAN_DEPTH", depth, 1);
	else
		unsetenv("MEMPLAN_DEPTH");
	/* MEMPLAN_PLAN_SECONDS stays unset (the id says to skip the planner at
	 * exit): a variable that replay does not set would change the size of the
	 * environment that programs copy (bash), and so their allocations. */
	unsetenv("MEMPLAN_PLAN_SECONDS");
	/* First: it exits when the library is missing, which must leave no
	 * statistics file of ours behind. */
	launch_add_preload();
	char stats[PATH_MAX];
	bool temporary;
	off_t from;
	if (stats_file_prepare(NULL, stats, sizeof(stats), &from, &temporary) < 0)
		unsetenv("MEMPLAN_STATS");

	/* Without it, the processes the command leaves running would outlive
	 * memplan unseen. */
	launch_adopt_left();
	struct symbol_warmer warmer = {0};
	status = launch_run_then(argv + optind, warm_symbols, &warmer);
	wait_for_left(output, cmd, wait_left);
	struct symbolizer *sym = symbol_warmer_take(&warmer);
	struct outcome seen = {.output = output};
	if (getenv("MEMPLAN_STATS")) {
		stats_lines_read(stats, 0, note_outcome, &seen);
		stats_file_remove(stats);
	}
	uint64_t written_id = plan_file_peek_record_id(plan);
	if (written_id != id && sym && out_of_descriptors(plan)) {
		/* The symbols' files took the last descriptors (ulimit -n): the
		 * plan goes first, without them (show looks them up later). */
		symbolizer_free(sym);
		sym = NULL;
		written_id = plan_file_peek_record_id(plan);
	}
	if (written_id == id) {
		struct finishing f = {plan, output, id, plan_seconds, sym};
		deep_stack_run(finish_plan, &f);
		return status;
	}
	symbolizer_free(sym);
	if (seen.written)
		fprintf(stderr,
			"memplan: %s: replaced by another recording that wrote it later; this "
			"recording's plan is lost\n",
			output);
	else if ((err = out_of_descriptors(plan)))
		fprintf(stderr,
			"memplan: %s: cannot open the plan to finish it: %s; the limit on open "
			"files is too low for memplan (ulimit -n)\n",
			output, strerror(err));
	else if (seen.failed && access(plan, F_OK) == 0)
		/* Each process that failed has said why, or memplan for it (a full
		 * disk): that the plan before is whole is this recording's word. */
		fprintf(stderr, "memplan: %s: the plan already there is left as it was\n", output);
	else if (seen.failed || !launch_started())
		; /* each process that failed has said why, or memplan for it, or
		   * the command could not be run, as launch_run said */
	else if (seen.refused)
		fprintf(stderr,
			"memplan: %s: no process wrote a plan: the command ran in a sandbox "
			"(seccomp) that does not let it write files%s\n",
			output, left_as_it_was(plan));
	else if (kind == COMMAND_EXE_SETID)
		fprintf(stderr,
			"memplan: %s: no process wrote a plan: %s is set-user-ID or "
			"set-group-ID, and the loader ignores LD_PRELOAD for it%s\n",
			output, cmd, left_as_it_was(plan));
	else if (kind == COMMAND_EXE_STATIC)
		fprintf(stderr,
			"memplan: %s: no process wrote a plan: %s is statically linked, so "
			"the preload library cannot see its allocations%s\n",
			output, cmd, left_as_it_was(plan));
	else if (launch_signal())
		fprintf(
		    stderr,
		    "memplan: %s: no process wrote a plan: the command ended on signal %d (%s)%s\n",
		    output, launch_signal(), strsignal(launch_signal()), left_as_it_was(plan));
	else
		fprintf(stderr,
			"memplan: %s: no process wrote a plan (did the command allocate, "
			"or was it killed?)%s\n",
			output, left_as_it_was(plan));
	return status;
}
