/* `memplan plan`: solve a packing instance offline.
 *
 *   memplan plan --csv IN [-o OUT] [--time-limit SECONDS] [--capacity BYTES] [--threads N]
 *   memplan plan PLAN -o PLAN2 [--time-limit SECONDS] [--threads N]
 *
 * reads a MiniMalloc CSV instance, plans it, checks the plan with the independent
 * checker (always: a planner bug must never reach the output silently), and writes
 * the rows with an offset column to OUT (atomically) or to stdout. The figures go
 * to stderr. The second form re-plans every image of a recorded plan file with the
 * same engine within the time limit as a whole (plan_replan.h) and writes a new
 * plan file, keeping an image's old layout where the new one would not be
 * smaller, and prints one summary line (and its progress, on a terminal). An
 * image whose threads had regions of the arena of their own keeps them
 * (plan_builder.h). The default time limit is 10 s: enough for the
 * exact search to settle the small hard instances, short enough to run by hand.
 *
 * Each input kind has its own *_main function; the option parser only decides
 * which one runs, so that another mode (e.g. replanning a plan file) slots in. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic_file.h"
#include "checker.h"
#include "cli_args.h"
#include "commands.h"
#include "csv_instance.h"
#include "file_io.h"
#include "plan_file.h"
#include "output_target.h"
#include "plan_replan.h"
#include "planner.h"
#include "stdout_end.h"
#include "text_safe.h"

#define PLAN_DEFAULT_TIME_LIMIT_S 10.0

struct plan_args {
	const char *csv_path;
	const char *plan_path;
	const char *out_path;
	/* The input's path (csv_path or plan_path) and out_path, escaped for
	 * messages (text_safe.h). */
	char *in_name, *out_name;
	double time_limit_s;
	uint64_t capacity_bytes;
	unsigned threads;
};

/* The usage lines; with full, the whole help. A usage error gets the lines
 * alone, as every other command's. */
static void plan_usage(FILE *f, bool full)
{
	fprintf(f, "usage: memplan plan --csv IN [-o OUT] [--time-limit SECONDS]"
		   " [--capacity BYTES] [--threads N]\n"
		   "       memplan plan PLAN -o PLAN2 [--time-limit SECONDS] [--threads N]\n");
	if (!full)
		return;
	fprintf(f,
		"\n"
		"The first form plans a packing instance in MiniMalloc's CSV form\n"
		"(id,lower,upper,size[,alignment], lifetimes [lower, upper)) and writes it\n"
		"back with an offset column; the arena and the lower bound go to stderr.\n"
		"The second re-plans every process image of a recorded plan with the full\n"
		"planner and writes a new plan file, keeping an image's old layout where\n"
		"the new one is not smaller. Every plan is checked before it is written.\n"
		"\n"
		"options:\n"
		"  --csv IN              the instance to plan (-: stdin)\n"
		"  -o, --output OUT      where to write the result (default for --csv,\n"
		"                        and -: stdout; a file, for a PLAN)\n"
		"  --time-limit SECONDS  the planner's budget in seconds (default %.0f), for\n"
		"                        all the images of a PLAN together; a heuristic\n"
		"                        that would not fit is skipped, so on a huge trace\n"
		"                        a short limit can plan worse than 0 = the quick\n"
		"                        heuristics only, however long they take\n"
		"  --capacity BYTES      stop as soon as the arena fits in BYTES, --csv\n"
		"                        only (default: none, plan as small as the time\n"
		"                        allows)\n"
		"  --threads N           worker threads (default 0: one per CPU)\n"
		"  -h, --help            this help\n"
		"\n"
		"examples:\n"
		"  memplan plan --csv instance.csv -o planned.csv --time-limit 30\n"
		"  memplan plan app.plan -o app2.plan --time-limit 30\n",
		PLAN_DEFAULT_TIME_LIMIT_S);
}

static void plan_progress(void *ctx, uint64_t best_bytes, uint64_t lower_bound_bytes,
			  double elapsed_s)
{
	(void)ctx;
	fprintf(
	    stderr,
	    "\rmemplan: plan: best %" PRIu64 " bytes, lower bound %" PRIu64 " (x%.4f), %.1f s   ",
	    best_bytes, lower_bound_bytes,
	    lower_bound_bytes ? (double)best_bytes / (double)lower_bound_bytes : 1.0, elapsed_s);
	fflush(stderr);
}

/* On a terminal: which image is being planned, and the best arena so far, on one
 * line that is rewritten at most ten times a second. */
struct replan_display {
	double limit_s, last_s;
	bool shown;
};

static void replan_progress(void *ctx, uint32_t image, uint32_t image_count, uint64_t arena_bytes,
			    uint64_t lower_bound_bytes, double elapsed_s)
{
	struct replan_display *d = ctx;

	if (d->shown && elapsed_s - d->last_s < 0.1)
		return;
	d->shown = true;
	d->last_s = elapsed_s;
	fprintf(stderr, "\r\033[Kmemplan: plan: image %u of %u: arena %" PRIu64 " bytes (x%.4f), %.1f s",
		image + 1, image_count, arena_bytes,
		lower_bound_bytes ? (double)arena_bytes / (double)lower_bound_bytes : 1.0, elapsed_s);
	if (d->limit_s > 0)
		fprintf(stderr, " of %.0f", d->limit_s);
	fflush(stderr);
}

/* Re-plans every image of a plan file within the time limit as a whole; an image
 * keeps its layout unless the new one is smaller. */
static int plan_file_main(const struct plan_args *a)
{
	struct replan_display display = {.limit_s = a->time_limit_s};
	struct replan_options opt = {
	    .budget_s = a->time_limit_s,
	    .threads = a->threads,
	    .progress = isatty(STDERR_FILENO) ? replan_progress : NULL,
	    .progress_ctx = &display,
	};
	struct plan_replan replan = {0};
	struct replan_summary sum;
	struct plan_image *images = NULL;
	char why[256];
	const void *buf;
	size_t len;
	int r, status = 1;

	if (!a->out_path) {
		fprintf(stderr, "memplan: plan: -o PLAN2 is required with a plan file\n");
		plan_usage(stderr, false);
		return 2;
	}
	if (plan_file_map(a->plan_path, &buf, &len, why, sizeof(why)) < 0) {
		fprintf(stderr, "memplan: %s: %s\n", a->in_name, why);
		return 1;
	}
	r = plan_replan_run(&replan, buf, &opt, &sum, why, sizeof(why));
	if (display.shown)
		fputs("\r\033[K", stderr);
	if (r < 0) {
		fprintf(stderr, "memplan: %s: %s\n", a->in_name, why);
		goto out;
	}
	uint32_t n = plan_file_header(buf)->image_count;
	images = calloc(n ? n : 1, sizeof(*images));
	if (!images) {
		fprintf(stderr, "memplan: out of memory\n");
		goto out;
	}
	for (uint32_t i = 0; i < n; i++) {
		plan_file_image(buf, i, &images[i]);
		plan_replan_apply(&replan, &images[i]);
	}
	r = plan_file_write(a->out_path, images, n, plan_file_header(buf)->record_id);
	if (r < 0) {
		fprintf(stderr, "memplan: %s: cannot write: %s\n", a->out_name, strerror(-r));
		goto out;
	}
	/* One line for the whole plan: a recording of a shell script has dozens of
	 * images, and a line each buries the figure that matters. Arenas and bounds
	 * are sums: each process has an arena of its own. */
	fprintf(
	    stderr,
	    "memplan: %s: %u process image%s, %" PRIu64 " allocation%s, arena %" PRIu64
	    " -> %" PRIu64 " bytes (%u image%s smaller), lower bound %" PRIu64
	    " (x%.4f), peak of the plan's blocks %" PRIu64 " (x%.4f), %.1f s\n",
	    a->in_name, sum.images, sum.images == 1 ? "" : "s", sum.allocations,
	    sum.allocations == 1 ? "" : "s", sum.arena_before_bytes, sum.arena_bytes, sum.improved,
	    sum.improved == 1 ? "" : "s", sum.lower_bound_bytes,
	    sum.lower_bound_bytes ? (double)sum.arena_bytes / (double)sum.lower_bound_bytes : 1.0,
	    sum.blocks_peak_bytes,
	    sum.blocks_peak_bytes ? (double)sum.arena_bytes / (double)sum.blocks_peak_bytes : 1.0,
	    sum.elapsed_s);
	status = 0;
out:
	plan_replan_free(&replan);
	free(images);
	plan_file_unmap((void *)buf, len);
	return status;
}

/* Whether the planned CSV may take the place of the file at path: none, or a
 * text file (an instance, an earlier result). Not a plan, nor the program or
 * any other binary file (`-o app` typed for `-o app.csv`): a NUL byte in its
 * first 4 KiB tells, as no CSV holds one. */
static bool csv_output_may_replace(const char *path)
{
	char head[4096];
	struct stat st;
	int fd = file_open_regular(path, &st);

	if (fd < 0)
		return true; /* none, or no regular file: writing it says why */
	const ssize_t n = read(fd, head, sizeof(head));
	close(fd);
	return n >= 0 && !memchr(head, '\0', (size_t)n);
}

static int plan_csv_main(const struct plan_args *a)
{
	struct csv_instance inst;
	struct planner_result res;
	char why[512];
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = NULL;
	int ret, status = 1, show_progress = isatty(STDERR_FILENO);

	if (a->out_path && !csv_output_may_replace(a->out_path)) {
		fprintf(stderr,
			"memplan: %s: exists and is no CSV file; memplan writes the planned CSV "
			"only over a text file or no file (remove it first, or choose another "
			"-o)\n",
			a->out_name);
		return 1;
	}
	ret = strcmp(a->csv_path, "-")
		  ? csv_instance_read(a->csv_path, &inst, why, sizeof(why))
		  : csv_instance_read_fd(STDIN_FILENO, &inst, why, sizeof(why));
	if (ret) {
		fprintf(stderr, "memplan: %s: %s\n", a->in_name, why);
		return 1;
	}

	struct planner_options opt = {
	    .time_limit_s = a->time_limit_s,
	    .capacity_bytes = a->capacity_bytes,
	    .threads = a->threads,
	    .progress = show_progress ? plan_progress : NULL,
	    .progress_ctx = NULL,
	};
	ret = planner_solve(inst.blocks, inst.n, &opt, &res);
	if (show_progress)
		fputc('\n', stderr);
	if (ret) {
		fprintf(stderr, "memplan: %s: planning failed: %s\n", a->in_name, strerror(-ret));
		goto err_free;
	}
	ret = checker_validate(inst.blocks, inst.n, res.arena_bytes, why, sizeof(why));
	if (ret) {
		fprintf(stderr, "memplan: %s: internal error, the plan is invalid: %s\n",
			a->in_name, ret == -EINVAL ? why : strerror(-ret));
		goto err_free;
	}

	mem = open_memstream(&buf, &len);
	if (!mem) {
		fprintf(stderr, "memplan: %s: %s\n", a->in_name, strerror(errno));
		goto err_free;
	}
	ret = csv_instance_write(mem, &inst);
	if (fclose(mem) && !ret)
		ret = -EIO;
	mem = NULL;
	if (ret) {
		fprintf(stderr, "memplan: %s: cannot format the output: %s\n", a->in_name,
			strerror(-ret));
		goto err_free;
	}
	if (a->out_path) {
		ret = atomic_file_write(a->out_path, buf, len);
		if (ret) {
			fprintf(stderr, "memplan: %s: %s\n", a->out_name, strerror(-ret));
			goto err_free;
		}
	} else {
		fwrite(buf, 1, len, stdout);
		ret = stdout_end(stdout);
		if (ret == STDOUT_END_READER_GONE) {
			status = ret;
			goto err_free;
		}
		if (ret) {
			fprintf(stderr, "memplan: <stdout>: %s\n", strerror(errno));
			goto err_free;
		}
	}

	fprintf(stderr,
		"memplan: %s: %zu block%s, arena %" PRIu64 " bytes, lower bound %" PRIu64
		" bytes, ratio %.4f, %.2f s%s\n",
		a->in_name, inst.n, inst.n == 1 ? "" : "s", res.arena_bytes, res.lower_bound_bytes,
		res.lower_bound_bytes ? (double)res.arena_bytes / (double)res.lower_bound_bytes
				      : 1.0,
		res.elapsed_s, res.proven_optimal ? " (optimal)" : "");
	if (a->capacity_bytes && res.arena_bytes > a->capacity_bytes)
		fprintf(stderr,
			"memplan: %s: no plan within capacity %" PRIu64
			" bytes was found; wrote the best one\n",
			a->in_name, a->capacity_bytes);
	status = 0;

err_free:
	free(buf);
	csv_instance_free(&inst);
	return status;
}

/* Runs the form of the command the arguments a ask for. Returns the exit status. */
static int plan_main(struct plan_args *a)
{
	/* A packing instance given where a plan goes would be read as a plan and
	 * refused for its missing -o, or its format: say what was meant. */
	size_t path_len = a->plan_path ? strlen(a->plan_path) : 0;
	if (path_len >= 4 && !strcasecmp(a->plan_path + path_len - 4, ".csv")) {
		fprintf(stderr,
			"memplan: plan: %s: a packing instance is planned with --csv "
			"(memplan plan --csv %s)\n",
			a->in_name, a->in_name);
		return 2;
	}
	static char out_target[PATH_MAX];
	if (a->out_path) {
		int r = output_target(a->out_path, out_target, sizeof(out_target));
		if (r < 0) {
			fprintf(stderr, "memplan: %s: %s\n", a->out_name, strerror(-r));
			return 1;
		}
		a->out_path = out_target;
		char *target = text_safe_dup(out_target);
		if (!target) {
			fprintf(stderr, "memplan: out of memory\n");
			return 1;
		}
		free(a->out_name);
		a->out_name = target;
	}
	if (a->plan_path && a->out_path && !plan_file_may_replace(a->out_path)) {
		fprintf(stderr, PLAN_OUTPUT_NOT_PLAN, a->out_name);
		return 1;
	}
	if (a->plan_path)
		return plan_file_main(a);
	if (!a->csv_path) {
		fprintf(stderr, "memplan: plan: --csv IN or a PLAN file is required\n");
		plan_usage(stderr, false);
		return 2;
	}
	return plan_csv_main(a);
}

int cmd_plan(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"csv", required_argument, NULL, 'c'},
	    {"output", required_argument, NULL, 'o'},
	    {"time-limit", required_argument, NULL, 't'},
	    {"capacity", required_argument, NULL, 'C'},
	    {"threads", required_argument, NULL, 'j'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct plan_args a = {.time_limit_s = PLAN_DEFAULT_TIME_LIMIT_S};
	uint64_t v;
	bool capacity = false;
	int c;

	optind = 0; /* glibc: full reset, the dispatcher may have parsed already */
	while ((c = cli_getopt(argc, argv, "o:h", longopts)) != -1) {
		switch (c) {
		case 'c':
			a.csv_path = optarg;
			break;
		case 'o':
			/* Not the last one silently: one of them is a mistake. */
			if (a.out_path) {
				fprintf(stderr, "memplan: plan: -o OUT is given more than once\n");
				return 2;
			}
			a.out_path = optarg;
			break;
		case 't':
			if (cli_parse_decimal(optarg, &a.time_limit_s) < 0 ||
			    a.time_limit_s > 1e9) {
				fprintf(stderr, "memplan: plan: bad --time-limit '%s'\n", optarg);
				return 2;
			}
			break;
		case 'C':
			if (cli_parse_count(optarg, &a.capacity_bytes)) {
				fprintf(stderr, "memplan: plan: bad --capacity '%s'\n", optarg);
				return 2;
			}
			capacity = true;
			break;
		case 'j':
			if (cli_parse_count(optarg, &v) || v > 1024) {
				fprintf(stderr, "memplan: plan: bad --threads '%s'\n", optarg);
				return 2;
			}
			a.threads = (unsigned)v;
			break;
		case 'h':
			plan_usage(stdout, true);
			return 0;
		default:
			plan_usage(stderr, false);
			return 2;
		}
	}
	if (optind < argc)
		a.plan_path = argv[optind++];
	if (optind < argc || (a.plan_path && a.csv_path)) {
		/* The first argument past those the form takes: PLAN itself with
		 * --csv, else the one after it. */
		fprintf(stderr, "memplan: plan: unexpected argument '%s'\n",
			argv[optind < argc ? optind : optind - 1]);
		plan_usage(stderr, false);
		return 2;
	}
	/* "-" is stdout for the CSV, as it is stdin for --csv; a plan is binary. */
	if (a.out_path && !strcmp(a.out_path, "-")) {
		if (a.plan_path) {
			fprintf(stderr, "memplan: plan: a plan is binary and goes to a file, "
					"not to stdout (-o -)\n");
			plan_usage(stderr, false);
			return 2;
		}
		a.out_path = NULL;
	}
	/* Re-planning a PLAN has no capacity to stop at: not ignored silently. */
	if (a.plan_path && capacity) {
		fprintf(stderr, "memplan: plan: --capacity applies only to --csv IN\n");
		plan_usage(stderr, false);
		return 2;
	}
	/* Control characters of the paths are escaped in messages, as a plan's own. */
	const char *in = a.plan_path ? a.plan_path : a.csv_path;
	if (in && !strcmp(in, "-") && !a.plan_path)
		in = "<stdin>";
	a.in_name = text_safe_dup(in ? in : "");
	a.out_name = text_safe_dup(a.out_path ? a.out_path : "");
	int status = 1;
	if (!a.in_name || !a.out_name)
		fprintf(stderr, "memplan: out of memory\n");
	else
		status = plan_main(&a);
	free(a.in_name);
	free(a.out_name);
	return status;
}
