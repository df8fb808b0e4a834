/* memplan diff BASE HEAD [--json | --markdown] [--top N|all]
 * What changed from one plan to another (plan_compare.h): per pair of process
 * images and over all images, the requested peak, the lower bound, the arena
 * and the allocations, then the call sites whose bytes at the peak or
 * allocations changed most, named by their stored symbols. A difference is no
 * failure: exit 0; a plan that cannot be read, or two plans that share no
 * process image (plans of other programs), exit 1. */
#define _GNU_SOURCE
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_args.h"
#include "commands.h"
#include "deep_stack.h"
#include "image_label.h"
#include "json_print.h"
#include "markdown_text.h"
#include "plan_compare.h"
#include "plan_file.h"
#include "stdout_end.h"
#include "text_safe.h"

enum format { TEXT, JSON, MARKDOWN };

/* The figures a diff compares, in order. */
static const struct {
	const char *key, *label;
	size_t offset;
} figures[] = {
    {"requested_peak_bytes", "requested peak", offsetof(struct plan_figures, requested_peak_bytes)},
    {"lower_bound_bytes", "lower bound", offsetof(struct plan_figures, lower_bound_bytes)},
    {"arena_bytes", "arena", offsetof(struct plan_figures, arena_bytes)},
    {"allocations", "allocations", offsetof(struct plan_figures, allocations)},
};
#define FIGURE_COUNT (sizeof(figures) / sizeof(figures[0]))

static uint64_t figure(const struct plan_figures *f, size_t i)
{
	return *(const uint64_t *)((const char *)f + figures[i].offset);
}

static int usage(const char *why)
{
	FILE *out = why ? stderr : stdout;

	if (why && *why)
		fprintf(stderr, "memplan: diff: %s\n", why);
	fprintf(out, "usage: memplan diff [--json | --markdown] [--top N|all] BASE HEAD\n");
	if (why)
		return 2;
	fprintf(out, "\n"
		     "Compares two plans, say of the last release (BASE) and of a change (HEAD):\n"
		     "per process image (paired by executable file name and arguments, names of\n"
		     "temporary files aside) and over all images, the requested peak, lower\n"
		     "bound, arena and allocations, with their change; then the call sites whose\n"
		     "bytes live at the peak or allocations changed most, new and gone, each\n"
		     "named by its chain of functions (docs/ci.md says how sites are paired\n"
		     "across rebuilds). Exits 0 whatever changed, 1 if a plan cannot be read or\n"
		     "the plans share no process image, 2 on a usage error.\n"
		     "\n"
		     "options:\n"
		     "  -j, --json      one JSON object, for scripts (default: text)\n"
		     "  -m, --markdown  Markdown, to paste into a pull-request comment\n"
		     "                  (default: text)\n"
		     "  -t, --top N     call sites listed per image, or all (default 10; 0: none,\n"
		     "                  their counts only)\n"
		     "  -h, --help      this help\n"
		     "\n"
		     "examples:\n"
		     "  memplan diff release.plan head.plan\n"
		     "  memplan diff --markdown --top 5 release.plan head.plan > comment.md\n");
	return 0;
}

/* "+1540 (+10.30%)", "0", "+64 (new)". */
static void change_text(char *out, size_t cap, uint64_t base, uint64_t head)
{
	int64_t change = (int64_t)(head - base);
	double pct = plan_change_percent(base, head);

	if (!change)
		snprintf(out, cap, "0");
	else if (isnan(pct))
		snprintf(out, cap, "%+" PRId64 " (new)", change);
	else if (fabs(pct) < 0.005) /* not "-0.00%" */
		snprintf(out, cap, "%+" PRId64 " (%c<0.01%%)", change, change < 0 ? '-' : '+');
	else
		snprintf(out, cap, "%+" PRId64 " (%+.2f%%)", change, pct);
}

static bool figures_equal(const struct plan_figures *a, const struct plan_figures *b)
{
	return !memcmp(a, b, sizeof(*a));
}

static void print_figures(FILE *out, enum format format, const char *title,
			  const struct plan_figures *base, const struct plan_figures *head)
{
	char change[64];

	if (format == MARKDOWN)
		fprintf(out, "| %s | base | head | change |\n|---|---:|---:|---:|\n", title);
	else
		fprintf(out, "  %-16s %14s %14s  %s\n", "", "base", "head", "change");
	for (size_t i = 0; i < FIGURE_COUNT; i++) {
		uint64_t b = base ? figure(base, i) : 0, h = head ? figure(head, i) : 0;
		change_text(change, sizeof(change), b, h);
		if (format == MARKDOWN)
			fprintf(out, "| %s | %" PRIu64 " | %" PRIu64 " | %s%s%s |\n",
				figures[i].label, b, h, b != h ? "**" : "", change,
				b != h ? "**" : "");
		else
			fprintf(out, "  %-16s %14" PRIu64 " %14" PRIu64 "  %s\n", figures[i].label,
				b, h, change);
	}
	if (format == MARKDOWN)
		fputc('\n', out);
}

static const char *site_status(const struct site_change *s)
{
	return !s->in_base ? "new" : !s->in_head ? "gone" : "changed";
}

static void print_sites(FILE *out, enum format format, const struct image_change *c, uint32_t top)
{
	size_t changed = c->site_count - c->new_sites - c->gone_sites;
	char name[1024];

	if (!c->site_count)
		return;
	fprintf(out, "%s sites: %zu changed, %zu new, %zu gone",
		format == MARKDOWN ? "Call" : "  call", changed, c->new_sites, c->gone_sites);
	/* --top 0 asks for the counts alone: no table of no rows. */
	if (!top) {
		fputs(format == MARKDOWN ? ".\n\n" : "\n", out);
		return;
	}
	if (format == MARKDOWN)
		fprintf(out, ".\n\n"
			     "| call site | bytes at the peak | change | allocations | change |\n"
			     "|---|---:|---:|---:|---:|\n");
	else
		fprintf(out,
			"; by the change in bytes live at the peak:\n    %14s %12s %10s %9s  %s\n",
			"bytes@peak", "change", "allocs", "change", "site");
	for (size_t i = 0; i < c->site_count && i < top; i++) {
		const struct site_change *s = &c->sites[i];
		bool gone = !s->in_head;
		site_identity_name(s->id, format == MARKDOWN, name, sizeof(name));
		uint64_t bytes = gone ? s->base_peak_bytes : s->head_peak_bytes;
		uint64_t allocs = gone ? s->base_allocs : s->head_allocs;
		char mark[16] = "";
		if (s->in_base != s->in_head)
			snprintf(mark, sizeof(mark), "%s%s%s", format == MARKDOWN ? " **" : " [",
				 site_status(s), format == MARKDOWN ? "**" : "]");
		if (format == MARKDOWN)
			fprintf(
			    out,
			    "| %s%s | %" PRIu64 " | %+" PRId64 " | %" PRIu64 " | %+" PRId64 " |\n",
			    name, mark, bytes, site_change_bytes(s), allocs, site_change_allocs(s));
		else
			fprintf(
			    out,
			    "    %14" PRIu64 " %+12" PRId64 " %10" PRIu64 " %+9" PRId64 "  %s%s\n",
			    bytes, site_change_bytes(s), allocs, site_change_allocs(s), name, mark);
	}
	if (format == MARKDOWN)
		fputc('\n', out);
	if (c->site_count > top)
		fprintf(out, "%s(%zu more call sites changed: --top all lists them)\n%s",
			format == MARKDOWN ? "" : "    ", c->site_count - top,
			format == MARKDOWN ? "\n" : "");
}

/* Prints text (escaped already) as a Markdown code span that its own
 * backticks do not end, outside a table. */
static void print_code(FILE *out, const char *text)
{
	/* The delimiters are at most one backtick more than text has. */
	size_t len = strlen(text), cap = 3 * len + 8, at = 0;
	char *code = malloc(cap);

	if (code && markdown_code_append(code, cap, &at, text, len, false))
		fputs(code, out);
	else
		fprintf(out, "`%s`", text);
	free(code);
}

/* base_name, head_name: the plans' paths, escaped. */
static void print_report(FILE *out, enum format format, const char *base_name,
			 const char *head_name, const struct plan_comparison *cmp, uint32_t top)
{
	size_t fresh = 0, gone = 0, unchanged = 0;
	char label[512];

	for (size_t i = 0; i < cmp->image_count; i++) {
		fresh += cmp->images[i].pair.base < 0;
		gone += cmp->images[i].pair.head < 0;
	}
	if (format == MARKDOWN) {
		fputs("### memplan diff: ", out);
		print_code(out, base_name);
		fputs(" → ", out);
		print_code(out, head_name);
		fputs("\n\n", out);
	} else
		fprintf(out, "memplan diff: %s -> %s\n", base_name, head_name);
	fprintf(out, "%zu process image%s paired, %zu new, %zu gone.\n\n", cmp->paired,
		cmp->paired == 1 ? "" : "s", fresh, gone);
	if (format == TEXT)
		fprintf(out, "all images\n");
	print_figures(out, format, "all images", &cmp->base_total, &cmp->head_total);
	for (size_t i = 0; i < cmp->image_count; i++) {
		const struct image_change *c = &cmp->images[i];
		bool paired = c->pair.base >= 0 && c->pair.head >= 0;
		if (paired && !c->site_count && figures_equal(&c->base_figures, &c->head_figures)) {
			unchanged++;
			continue;
		}
		const struct plan_image *im = c->pair.head >= 0 ? &c->head : &c->base;
		const char *how = !paired		? (c->pair.base < 0 ? "new" : "gone")
				  : c->pair.args_differ ? "paired by executable, arguments differ"
							: "paired";
		if (format == MARKDOWN) {
			/* The mark of a forked child is no part of the command. */
			image_label_command(im, image_match_label, label, sizeof(label));
			fputs("#### ", out);
			print_code(out, label);
			fprintf(out, "%s (%s)\n\n", image_label_mark(im), how);
		} else {
			image_label(im, image_match_label, label, sizeof(label));
			fprintf(out, "\nimage %s (%s)\n", label, how);
		}
		print_figures(out, format, "figure", c->pair.base >= 0 ? &c->base_figures : NULL,
			      c->pair.head >= 0 ? &c->head_figures : NULL);
		print_sites(out, format, c, top);
	}
	if (unchanged)
		fprintf(out, "%s%zu paired process image%s unchanged.\n",
			format == TEXT ? "\n" : "", unchanged, unchanged == 1 ? "" : "s");
}

static void print_change_json(FILE *out, const char *key, uint64_t base, uint64_t head)
{
	double pct = plan_change_percent(base, head);

	fprintf(out, "\"%s\":{\"base\":%" PRIu64 ",\"head\":%" PRIu64 ",\"change\":%" PRId64, key,
		base, head, (int64_t)(head - base));
	if (isnan(pct))
		fprintf(out, ",\"percent\":null}");
	else
		fprintf(out, ",\"percent\":%.4f}", pct);
}

static void print_figures_json(FILE *out, const struct plan_figures *base,
			       const struct plan_figures *head)
{
	for (size_t i = 0; i < FIGURE_COUNT; i++) {
		if (i)
			fputc(',', out);
		print_change_json(out, figures[i].key, base ? figure(base, i) : 0,
				  head ? figure(head, i) : 0);
	}
}

static void print_site_json(FILE *out, const struct site_change *s)
{
	char name[1024];

	site_identity_name(s->id, false, name, sizeof(name));
	fprintf(out, "{\"status\":\"%s\",\"name\":", site_status(s));
	json_print_text(out, name);
	fprintf(out, ",");
	print_change_json(out, "peak_bytes", s->base_peak_bytes, s->head_peak_bytes);
	fprintf(out, ",");
	print_change_json(out, "allocations", s->base_allocs, s->head_allocs);
	fprintf(out, ",\"functions\":[");
	for (uint32_t k = 0; k < s->id->count; k++) {
		const struct site_function *fn = &s->id->functions[k];
		if (k)
			fputc(',', out);
		json_print_function(out, fn->function, fn->module, fn->file, fn->line, fn->inlined);
	}
	fprintf(out, "]}");
}

static void print_json(FILE *out, const char *base_path, const char *head_path,
		       const struct plan_comparison *cmp, uint32_t top)
{
	fprintf(out, "{\"base\":");
	json_print_text(out, base_path);
	fprintf(out, ",\"head\":");
	json_print_text(out, head_path);
	fprintf(out, ",\"paired_images\":%zu,\"total\":{", cmp->paired);
	print_figures_json(out, &cmp->base_total, &cmp->head_total);
	fprintf(out, "},\"images\":[");
	for (size_t i = 0; i < cmp->image_count; i++) {
		const struct image_change *c = &cmp->images[i];
		bool paired = c->pair.base >= 0 && c->pair.head >= 0;
		const struct plan_image *im = c->pair.head >= 0 ? &c->head : &c->base;
		fprintf(out, "%s{\"status\":\"%s\",\"exe\":", i ? "," : "",
			!paired		      ? (c->pair.base < 0 ? "new" : "gone")
			: c->pair.args_differ ? "paired_by_executable"
					      : "paired");
		json_print_text(out, image_match_exe_name(im));
		fprintf(out, ",\"args\":");
		json_print_args(out, im);
		/* Paired images have the same ordinal: pairing asks for it. */
		if (im->record.flags & PLAN_IMAGE_FORKED)
			fprintf(out, ",\"fork\":%u", im->record.fork_ordinal);
		if (paired) {
			fprintf(out, ",\"base_args\":");
			json_print_args(out, &c->base);
		}
		fprintf(out, ",");
		print_figures_json(out, c->pair.base >= 0 ? &c->base_figures : NULL,
				   c->pair.head >= 0 ? &c->head_figures : NULL);
		fprintf(out,
			",\"paired_sites\":%zu,\"changed_sites\":%zu,\"new_sites\":%zu"
			",\"gone_sites\":%zu,\"sites\":[",
			c->paired_sites, c->site_count - c->new_sites - c->gone_sites, c->new_sites,
			c->gone_sites);
		for (size_t k = 0; k < c->site_count && k < top; k++) {
			if (k)
				fputc(',', out);
			print_site_json(out, &c->sites[k]);
		}
		fprintf(out, "]}");
	}
	fprintf(out, "]}\n");
}

static int cmd_diff_body(int argc, char **argv)
{
	static const struct option options[] = {
	    {"json", no_argument, NULL, 'j'},
	    {"markdown", no_argument, NULL, 'm'},
	    {"top", required_argument, NULL, 't'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	enum format format = TEXT;
	uint32_t top = 10;
	const void *buf[2] = {NULL, NULL};
	size_t len[2] = {0, 0};
	char why[256], *names[2] = {NULL, NULL};
	int c, status = 1;

	optind = 1;
	while ((c = cli_getopt(argc, argv, "jmt:h", options)) != -1) {
		switch (c) {
		case 'j':
		case 'm':
			if (format != TEXT)
				return usage("--json and --markdown exclude each other");
			format = c == 'j' ? JSON : MARKDOWN;
			break;
		case 't':
			if (cli_parse_top(optarg, &top) < 0)
				return usage("--top takes a whole number, or all");
			break;
		case 'h':
			return usage(NULL);
		default:
			return usage("");
		}
	}
	if (optind + 2 != argc)
		return usage("two plans are needed: BASE and HEAD");
	const char *paths[2] = {argv[optind], argv[optind + 1]};
	/* Control characters of the paths are escaped in text, as a plan's own. */
	for (int i = 0; i < 2; i++) {
		if (!(names[i] = text_safe_dup(paths[i]))) {
			fprintf(stderr, "memplan: out of memory\n");
			goto out;
		}
	}
	for (int i = 0; i < 2; i++) {
		if (plan_file_map(paths[i], &buf[i], &len[i], why, sizeof(why)) < 0) {
			fprintf(stderr, "memplan: %s: %s\n", names[i], why);
			goto out;
		}
	}

	struct symbolizer *sym = symbolizer_new();
	struct plan_comparison cmp;
	if (!sym || plan_compare(buf[0], buf[1], sym, &cmp) < 0) {
		fprintf(stderr, "memplan: out of memory\n");
		symbolizer_free(sym);
		goto out;
	}
	if (!cmp.paired) {
		fprintf(stderr,
			"memplan: %s: shares no process image with %s (plans of other "
			"programs?)\n",
			names[1], names[0]);
	} else {
		if (format == JSON)
			print_json(stdout, paths[0], paths[1], &cmp, top);
		else
			print_report(stdout, format, names[0], names[1], &cmp, top);
		status = stdout_end(stdout);
		if (status < 0) {
			fprintf(stderr, "memplan: cannot write the output\n");
			status = 1;
		}
	}
	plan_comparison_free(&cmp);
	symbolizer_free(sym);
out:
	for (int i = 0; i < 2; i++) {
		if (buf[i])
			plan_file_unmap((void *)buf[i], len[i]);
		free(names[i]);
	}
	return status;
}

/* On a stack deep enough for the symbols it reads (deep_stack.h). */
int cmd_diff(int argc, char **argv)
{
	return deep_stack_main(cmd_diff_body, argc, argv);
}
