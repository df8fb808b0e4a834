/* memplan check PLAN [--baseline BASE] [--max-growth PCT] [--max-peak BYTES]
 *                    [--max-allocs N] [--min-hit-rate PCT --stats FILE] [--json]
 * A memory gate for CI: checks a plan's figures against limits, each process
 * image on its own (a process's peak is a figure of its own; processes need
 * not be alive together, so their sum is none), growth against the paired
 * image of a baseline plan (plan_compare.h). Prints one line per limit
 * violated, naming the figure, the limit and the call sites that grew most
 * (or, without a baseline, that hold the most; below the hit rate, that
 * missed most), and exits 1; else one line saying the plan is within its
 * limits, and exits 0. Growth is measured on the requested peak: what the
 * program asked for, not the planner's layout (the arena) nor memplan's
 * granule rounding (the lower bound), so it moves by exactly what the
 * program's change added (docs/ci.md). */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "array_grow.h"
#include "cli_args.h"
#include "commands.h"
#include "deep_stack.h"
#include "image_label.h"
#include "decimal_text.h"
#include "json_print.h"
#include "launch.h"
#include "missed_sites.h"
#include "plan_compare.h"
#include "plan_file.h"
#include "plan_summary.h"
#include "stats_lines.h"
#include "stdout_end.h"
#include "text_safe.h"

/* The sites a violation names. */
#define NAMED_SITES 3

struct limits {
	const char *baseline, *stats;
	char *baseline_name, *stats_name; /* escaped, for text (text_safe.h) */
	double max_growth_pct, min_hit_rate_pct;
	uint64_t max_peak_bytes, max_allocs;
	bool growth, peak, allocs, hit_rate;
};

/* Where the findings go: text lines to stdout as they come, or JSON objects
 * gathered for one document at the end. */
struct report {
	bool json;
	FILE *violations; /* JSON: the array's members */
	char *violations_text;
	size_t violations_bytes;
	unsigned count;
};

/* A call site a violation names, and what it counts. */
struct named_site {
	char name[512];
	uint64_t value;
	int64_t change;
	bool has_change;
};

static int usage(const char *why)
{
	FILE *out = why ? stderr : stdout;

	if (why && *why)
		fprintf(stderr, "memplan: check: %s\n", why);
	fprintf(out, "usage: memplan check PLAN [--baseline BASE] [--max-growth PCT] "
		     "[--max-peak BYTES]\n"
		     "                     [--max-allocs N] [--min-hit-rate PCT --stats FILE] "
		     "[--json]\n");
	if (why)
		return 2;
	fprintf(
	    out,
	    "\n"
	    "Checks a plan against limits, each process image on its own: one line per\n"
	    "limit violated, naming the figure, the limit and the call sites that grew\n"
	    "most (without a baseline: that hold the most; below --min-hit-rate: that\n"
	    "missed most). Exits 1 if any limit is violated (or a file cannot be\n"
	    "read), 0 if none is, 2 on a usage error.\n"
	    "At least one limit is needed; none is set by default.\n"
	    "\n"
	    "options:\n"
	    "  -b, --baseline BASE     the plan to measure growth against, say the last\n"
	    "                          release's (images paired as memplan diff pairs\n"
	    "                          them; default: none)\n"
	    "  -g, --max-growth PCT    most growth of an image's requested peak over its\n"
	    "                          baseline, in percent (needs --baseline)\n"
	    "  -p, --max-peak BYTES    most requested peak of an image, in bytes\n"
	    "  -a, --max-allocs N      most allocations of an image\n"
	    "  -r, --min-hit-rate PCT  least share of allocation calls served from the\n"
	    "                          arena in the replay statistics of --stats, in\n"
	    "                          percent\n"
	    "  -s, --stats FILE        statistics lines of `memplan replay --stats FILE`\n"
	    "                          (needed by --min-hit-rate; -: standard input)\n"
	    "  -j, --json              one JSON object, for scripts (default: text)\n"
	    "  -h, --help              this help\n"
	    "\n"
	    "examples:\n"
	    "  memplan check head.plan --baseline release.plan --max-growth 5\n"
	    "  memplan check app.plan --max-peak 268435456 --min-hit-rate 95 --stats s.jsonl\n");
	return 0;
}

static int by_change_desc(const void *pa, const void *pb)
{
	int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;

	return (a < b) - (a > b);
}

/* The sites of a pair of images that grew most, in bytes at the peak or in
 * allocations, into out; returns how many (at most NAMED_SITES), or -ENOMEM. */
static int sites_that_grew(const struct image_change *c, bool allocs, struct named_site *out)
{
	/* (change, index) pairs, sorted on the change */
	int64_t(*grew)[2] = calloc(c->site_count + 1, sizeof(*grew));
	size_t n = 0;

	if (!grew)
		return -ENOMEM;
	for (size_t i = 0; i < c->site_count; i++) {
		int64_t change =
		    allocs ? site_change_allocs(&c->sites[i]) : site_change_bytes(&c->sites[i]);
		if (change > 0) {
			grew[n][0] = change;
			grew[n++][1] = (int64_t)i;
		}
	}
	qsort(grew, n, sizeof(*grew), by_change_desc);
	if (n > NAMED_SITES)
		n = NAMED_SITES;
	for (size_t k = 0; k < n; k++) {
		const struct site_change *s = &c->sites[grew[k][1]];
		site_identity_name(s->id, false, out[k].name, sizeof(out[k].name));
		out[k].value = allocs ? s->head_allocs : s->head_peak_bytes;
		out[k].change = grew[k][0];
		out[k].has_change = true;
	}
	free(grew);
	return (int)n;
}

static int by_allocations_desc(const void *pa, const void *pb)
{
	const struct site_summary *a = pa, *b = pb;

	if (a->allocations != b->allocations)
		return a->allocations < b->allocations ? 1 : -1;
	return (a->site > b->site) - (a->site < b->site);
}

/* The sites of an image that hold the most bytes at the peak, or made the most
 * allocations, into out; returns how many (at most NAMED_SITES), or -ENOMEM. */
static int sites_holding_most(const struct plan_image *im, bool allocs, struct symbolizer *sym,
			      struct named_site *out)
{
	struct site_summary *sums;
	uint64_t t_peak, peak_bytes;
	uint32_t n = im->record.site_count;

	if (plan_summary_sites(im, &sums, &t_peak, &peak_bytes) < 0)
		return -ENOMEM;
	if (allocs)
		qsort(sums, n, sizeof(*sums), by_allocations_desc);
	if (n > NAMED_SITES)
		n = NAMED_SITES;
	for (uint32_t k = 0; k < n; k++) {
		struct site_identity id;
		if (site_identity_build(im, sums[k].site, im->record.depth, sym, &id) < 0) {
			free(sums);
			return -ENOMEM;
		}
		site_identity_name(&id, false, out[k].name, sizeof(out[k].name));
		site_identity_free(&id);
		out[k].value = allocs ? sums[k].allocations : sums[k].bytes_at_peak;
		out[k].has_change = false;
	}
	free(sums);
	return (int)n;
}

/* One limit violated. */
struct violation {
	const char *option; /* "--max-growth" */
	double limit;	    /* its value */
	const char *unit;   /* the limit's: "%", " bytes", "" */
	const char *figure; /* "requested_peak_bytes" */
	const char *image;  /* the image's label; NULL for a figure of all */
	double value;	    /* the figure (percent for a hit rate) */
	bool has_baseline;
	uint64_t baseline; /* the baseline's figure */
	const char *text;  /* what is wrong, for people */
	const struct named_site *sites;
	size_t site_count;
	const char *sites_title; /* "grew most:", "hold the most:" */
};

static void report_violation(struct report *rep, const struct violation *v)
{
	char limit[64];

	decimal_text_format(limit, sizeof(limit), v->limit);
	if (!rep->json) {
		printf("FAIL %s %s%s: %s", v->option, limit, v->unit, v->text);
		for (size_t k = 0; k < v->site_count; k++) {
			const struct named_site *s = &v->sites[k];
			if (k)
				printf(", %s", s->name);
			else
				printf("; %s %s", v->sites_title, s->name);
			if (s->has_change)
				printf(" %+" PRId64, s->change);
			else
				printf(" %" PRIu64, s->value);
		}
		putchar('\n');
		rep->count++;
		return;
	}
	FILE *out = rep->violations;
	fprintf(out, "%s{\"limit\":\"%s\",\"limit_value\":%s,\"figure\":\"%s\",\"image\":",
		rep->count++ ? "," : "", v->option + 2, limit, v->figure);
	json_print_text(out, v->image);
	fprintf(out, ",\"value\":%.15g", v->value);
	if (v->has_baseline)
		fprintf(out, ",\"baseline\":%" PRIu64, v->baseline);
	fprintf(out, ",\"text\":");
	json_print_text(out, v->text);
	fprintf(out, ",\"sites\":[");
	for (size_t k = 0; k < v->site_count; k++) {
		const struct named_site *s = &v->sites[k];
		fprintf(out, "%s{\"name\":", k ? "," : "");
		json_print_text(out, s->name);
		fprintf(out, ",\"value\":%" PRIu64, s->value);
		if (s->has_change)
			fprintf(out, ",\"change\":%" PRId64, s->change);
		fputc('}', out);
	}
	fprintf(out, "]}");
}

/* Reports an image's requested peak (or, for allocs, its allocations), value,
 * over the limit of --max-peak (--max-allocs), naming the sites that grew
 * most (c its pair with the baseline's), or without a baseline (c NULL) the
 * sites that count the most. Returns 0 or -ENOMEM. */
static int report_over(struct report *rep, const struct plan_image *im,
		       const struct image_change *c, struct symbolizer *sym, const char *label,
		       bool allocs, uint64_t value, uint64_t limit)
{
	struct named_site sites[NAMED_SITES];
	char text[1024];
	int n = c ? sites_that_grew(c, allocs, sites) : sites_holding_most(im, allocs, sym, sites);

	if (n < 0)
		return n;
	if (allocs)
		snprintf(text, sizeof(text), "%s made %" PRIu64 " allocations", label, value);
	else
		snprintf(text, sizeof(text), "requested peak of %s is %" PRIu64 " bytes", label,
			 value);
	report_violation(rep, &(struct violation){
				  .option = allocs ? "--max-allocs" : "--max-peak",
				  .limit = (double)limit,
				  .unit = allocs ? "" : " bytes",
				  .figure = allocs ? "allocations" : "requested_peak_bytes",
				  .image = label,
				  .value = (double)value,
				  .has_baseline = c != NULL,
				  .baseline = !c       ? 0
					      : allocs ? c->base_figures.allocations
						       : c->base_figures.requested_peak_bytes,
				  .text = text,
				  .sites = sites,
				  .site_count = (size_t)n,
				  .sites_title = c	  ? "grew most:"
						 : allocs ? "made the most:"
							  : "hold the most:",
			      });
	return 0;
}

/* Checks one image (c its pair with the baseline's, or NULL without a
 * baseline) against the per-image limits. Returns 0 or -ENOMEM. */
static int check_image(struct report *rep, const struct limits *lim, const struct plan_image *im,
		       const struct image_change *c, struct symbolizer *sym)
{
	struct plan_figures f = plan_summary_figures(im);
	struct named_site sites[NAMED_SITES];
	char label[256], text[1024];
	int n;

	image_label(im, image_match_label, label, sizeof(label));
	if (lim->growth && c) {
		uint64_t base = c->base_figures.requested_peak_bytes;
		double pct = plan_change_percent(base, f.requested_peak_bytes);
		/* An image that asked for nothing before grows without bound: no
		 * percentage measures it ("new", as diff says), and none allows it. */
		if (isnan(pct) ? f.requested_peak_bytes > 0 : pct > lim->max_growth_pct) {
			char how[64];
			if ((n = sites_that_grew(c, false, sites)) < 0)
				return n;
			if (isnan(pct))
				snprintf(how, sizeof(how), "new");
			else
				snprintf(how, sizeof(how), "%+.2f%%", pct);
			snprintf(text, sizeof(text),
				 "requested peak of %s grew by %" PRId64 " bytes, %s (%" PRIu64
				 " -> %" PRIu64 " bytes)%s",
				 label, (int64_t)(f.requested_peak_bytes - base), how, base,
				 f.requested_peak_bytes,
				 isnan(pct) ? ": growth from 0 bytes is over any percentage" : "");
			report_violation(rep, &(struct violation){
						  .option = "--max-growth",
						  .limit = lim->max_growth_pct,
						  .unit = "%",
						  .figure = "requested_peak_bytes",
						  .image = label,
						  .value = (double)f.requested_peak_bytes,
						  .has_baseline = true,
						  .baseline = base,
						  .text = text,
						  .sites = sites,
						  .site_count = (size_t)n,
						  .sites_title = "grew most:",
					      });
		}
	}
	if (lim->peak && f.requested_peak_bytes > lim->max_peak_bytes &&
	    (n = report_over(rep, im, c, sym, label, false, f.requested_peak_bytes,
			     lim->max_peak_bytes)) < 0)
		return n;
	if (lim->allocs && f.allocations > lim->max_allocs &&
	    (n = report_over(rep, im, c, sym, label, true, f.allocations, lim->max_allocs)) < 0)
		return n;
	return 0;
}

/* The plan file checked, as the preload library names it in a statistics
 * line: MEMPLAN_PLAN made absolute against the working directory, not
 * resolved (as launch_absolute_path does), and cut as utf8_json_cut cuts a
 * long one; and the file itself, for a line that names it another way
 * (another relative path, a symbolic link). */
struct plan_file_id {
	char text[PATH_MAX + 4];
	struct stat st;
	bool has_st;
	/* The last plan of another text looked at, and whether it is the file. */
	char last[UTF8_JSON_STRING_MAX + 1];
	bool last_same;
};

/* Returns 0, or -1 if path is too long to make absolute. */
static int plan_file_id_init(struct plan_file_id *id, const char *path)
{
	char abs[PATH_MAX];
	size_t head, tail;

	if (launch_absolute_path(path, abs, sizeof(abs)) < 0)
		return -1;
	const bool cut = utf8_json_cut(abs, strlen(abs), UTF8_JSON_STRING_MAX, &head, &tail);
	snprintf(id->text, sizeof(id->text), "%.*s%s%s", (int)head, abs, cut ? "..." : "",
		 abs + tail);
	id->has_st = stat(path, &id->st) == 0;
	id->last[0] = '\0';
	id->last_same = false;
	return 0;
}

/* Whether plan, as a statistics line names it, is the plan checked. */
static bool plan_file_is(struct plan_file_id *id, const char *plan)
{
	struct stat st;

	if (!strcmp(plan, id->text))
		return true;
	if (!*plan || !id->has_st)
		return false;
	if (strcmp(plan, id->last)) {
		snprintf(id->last, sizeof(id->last), "%s", plan);
		id->last_same = stat(plan, &st) == 0 && st.st_dev == id->st.st_dev &&
				st.st_ino == id->st.st_ino;
	}
	return id->last_same;
}

/* The plans of other plans' lines named in the message that a file has none
 * of the plan checked. */
#define OTHER_PLANS_NAMED 3

/* Replay statistics summed over the lines of a file that are of the plan
 * checked (plan). */
struct hit_totals {
	struct plan_file_id *plan;
	uint64_t allocs, hits, lines;
	/* Lines of other plans, the first plans they name, and whether they
	 * name more. */
	uint64_t other_lines;
	char *other_plans[OTHER_PLANS_NAMED];
	size_t other_plan_count;
	bool more_plans;
	char miss_name[STATS_MISS_KINDS][24];
	uint64_t miss[STATS_MISS_KINDS];
	uint32_t miss_kinds;
	/* The sites the lines name, by key, misses summed; the file name of
	 * the executable of the first line that named each, to find it in the
	 * plan (a path may be longer than this, a file name is not). */
	struct missed_total {
		uint64_t key, misses;
		char exe[NAME_MAX + 1];
	} *sites;
	size_t site_count, site_cap;
	bool out_of_memory;
};

static void add_missed_site(struct hit_totals *t, const struct stats_missed_site *m,
			    const char *exe)
{
	size_t k = 0;

	while (k < t->site_count && t->sites[k].key != m->key)
		k++;
	if (k == t->site_count) {
		if (t->site_count == t->site_cap) {
			struct missed_total *grown =
			    array_grow(t->sites, &t->site_cap, sizeof(*grown), 16);
			if (!grown) {
				t->out_of_memory = true;
				return;
			}
			t->sites = grown;
		}
		t->sites[k].key = m->key;
		t->sites[k].misses = 0;
		const char *slash = strrchr(exe, '/');
		snprintf(t->sites[k].exe, sizeof(t->sites[k].exe), "%s", slash ? slash + 1 : exe);
		t->site_count++;
	}
	t->sites[k].misses += m->misses;
}

static int by_missed_desc(const void *pa, const void *pb)
{
	const struct missed_total *a = pa, *b = pb;

	if (a->misses != b->misses)
		return a->misses < b->misses ? 1 : -1;
	return (a->key > b->key) - (a->key < b->key);
}

static void add_other_plan(struct hit_totals *t, const char *plan)
{
	t->other_lines++;
	for (size_t i = 0; i < t->other_plan_count; i++)
		if (!strcmp(t->other_plans[i], plan))
			return;
	if (t->other_plan_count == OTHER_PLANS_NAMED) {
		t->more_plans = true;
		return;
	}
	if (!(t->other_plans[t->other_plan_count] = strdup(plan)))
		t->out_of_memory = true;
	else
		t->other_plan_count++;
}

static void add_line(const struct stats_line *line, void *ctx)
{
	struct hit_totals *t = ctx;

	/* Not a line of memplan's, which all name their plan: of no plan. */
	if (!*line->plan)
		return;
	if (!plan_file_is(t->plan, line->plan)) {
		add_other_plan(t, line->plan);
		return;
	}
	t->lines++;
	t->allocs += line->allocs;
	t->hits += line->hits;
	for (uint32_t i = 0; i < line->miss_count; i++) {
		uint32_t k = 0;
		while (k < t->miss_kinds && strcmp(t->miss_name[k], line->miss_name[i]))
			k++;
		if (k == t->miss_kinds) {
			if (k == STATS_MISS_KINDS)
				continue;
			memcpy(t->miss_name[k], line->miss_name[i], sizeof(t->miss_name[k]));
			t->miss_kinds++;
		}
		t->miss[k] += line->miss[i];
	}
	for (uint32_t i = 0; i < line->missed_site_count; i++)
		add_missed_site(t, &line->missed_sites[i], line->exe);
}

/* Says that the statistics file has lines, but none of the plan at path
 * (name: escaped), naming the plans they are of. */
static void say_other_plans(const struct limits *lim, const char *name, const struct hit_totals *t)
{
	fprintf(stderr, "memplan: %s: no statistics of %s in it; its %" PRIu64 " line%s of ",
		lim->stats_name, name, t->other_lines, t->other_lines == 1 ? " is" : "s are");
	for (size_t i = 0; i < t->other_plan_count; i++) {
		fprintf(stderr, "%s", i ? ", " : "");
		text_safe_fputs(t->other_plans[i], stderr);
	}
	fprintf(stderr, "%s\n", t->more_plans ? " and others" : "");
}

/* Checks the hit rate of a replay's statistics, naming the call sites that
 * missed most from plan. Only the lines of the plan at path count (name:
 * escaped). Returns 0, 1 after a message if the file has no statistics of
 * it to go by, or -ENOMEM. */
static int check_hit_rate(struct report *rep, const struct limits *lim, const char *path,
			  const char *name, const void *plan, struct symbolizer *sym)
{
	struct plan_file_id id;
	struct hit_totals t = {.plan = &id};
	struct named_site sites[NAMED_SITES];
	size_t named = 0;
	struct stat st;
	int status = 0;

	if (plan_file_id_init(&id, path) < 0) {
		fprintf(stderr, "memplan: %s: path too long\n", name);
		return 1;
	}
	/* "-": standard input (memplan replay --stats - | memplan check ...). */
	const bool from_stdin = !strcmp(lim->stats, "-");
	if (!from_stdin && stat(lim->stats, &st) != 0) {
		fprintf(stderr, "memplan: %s: %s\n", lim->stats_name, strerror(errno));
		return 1;
	}
	if (!from_stdin && !S_ISREG(st.st_mode)) {
		fprintf(stderr, "memplan: %s: not a regular file\n", lim->stats_name);
		return 1;
	}
	if ((from_stdin ? stats_lines_read_stream(stdin, add_line, &t)
			: stats_lines_read(lim->stats, 0, add_line, &t)) < 0) {
		fprintf(stderr, "memplan: %s: cannot read it\n", lim->stats_name);
		status = 1;
		goto out;
	}
	if (t.out_of_memory) {
		status = -ENOMEM;
		goto out;
	}
	if (!t.lines && t.other_lines) {
		say_other_plans(lim, name, &t);
		status = 1;
		goto out;
	}
	if (!t.lines || !t.allocs) {
		fprintf(stderr, "memplan: %s: no replay statistics with allocations in it\n",
			lim->stats_name);
		status = 1;
		goto out;
	}
	double rate = 100.0 * (double)t.hits / (double)t.allocs;
	if (rate >= lim->min_hit_rate_pct)
		goto out;
	qsort(t.sites, t.site_count, sizeof(*t.sites), by_missed_desc);
	for (; named < t.site_count && named < NAMED_SITES; named++) {
		missed_site_name(plan, t.sites[named].key, t.sites[named].exe, 0, sym,
				 sites[named].name, sizeof(sites[named].name));
		sites[named].value = t.sites[named].misses;
		sites[named].has_change = false;
	}
	char text[1024];
	int at = snprintf(text, sizeof(text),
			  "%.2f%% of %" PRIu64 " allocation calls served from the arena (%" PRIu64
			  " hits); misses:",
			  rate, t.allocs, t.hits);
	for (uint32_t k = 0; k < t.miss_kinds && at > 0 && (size_t)at < sizeof(text); k++)
		if (t.miss[k])
			at += snprintf(text + at, sizeof(text) - (size_t)at, " %s %" PRIu64,
				       t.miss_name[k], t.miss[k]);
	report_violation(rep, &(struct violation){
				  .option = "--min-hit-rate",
				  .limit = lim->min_hit_rate_pct,
				  .unit = "%",
				  .figure = "hit_rate_percent",
				  .value = rate,
				  .text = text,
				  .sites = sites,
				  .site_count = named,
				  .sites_title = "missed most:",
			      });
out:
	for (size_t i = 0; i < t.other_plan_count; i++)
		free(t.other_plans[i]);
	free(t.sites);
	return status;
}

/* Maps the plan at path, or says why not, naming it name. */
static int map_plan(const char *path, const char *name, const void **buf, size_t *len)
{
	char why[256];

	if (plan_file_map(path, buf, len, why, sizeof(why)) == 0)
		return 0;
	fprintf(stderr, "memplan: %s: %s\n", name, why);
	*buf = NULL;
	return -1;
}

/* Checks every image of the plan at path (name: escaped, for text) against
 * lim. Returns the exit status. */
static int check_plan(const char *path, const char *name, const struct limits *lim,
		      struct report *rep)
{
	const void *plan = NULL, *base = NULL;
	size_t plan_len = 0, base_len = 0, fresh = 0;
	struct plan_comparison cmp = {0};
	struct symbolizer *sym = symbolizer_new();
	int status = 1, n;

	if (!sym || map_plan(path, name, &plan, &plan_len) < 0 ||
	    (lim->baseline && map_plan(lim->baseline, lim->baseline_name, &base, &base_len) < 0))
		goto out;
	if (base && plan_compare(base, plan, sym, &cmp) < 0)
		goto oom;
	if (base && !cmp.paired) {
		fprintf(stderr,
			"memplan: %s: shares no process image with %s (plans of other "
			"programs?)\n",
			name, lim->baseline_name);
		goto out;
	}
	if (base) {
		for (size_t i = 0; i < cmp.image_count; i++) {
			const struct image_change *c = &cmp.images[i];
			if (c->pair.head < 0)
				continue;
			fresh += c->pair.base < 0;
			if (check_image(rep, lim, &c->head, c->pair.base >= 0 ? c : NULL, sym) < 0)
				goto oom;
		}
	} else {
		for (uint32_t i = 0; i < plan_file_header(plan)->image_count; i++) {
			struct plan_image im;
			plan_file_image(plan, i, &im);
			if (check_image(rep, lim, &im, NULL, sym) < 0)
				goto oom;
		}
	}
	if (lim->hit_rate && (n = check_hit_rate(rep, lim, path, name, plan, sym)) != 0) {
		if (n == -ENOMEM)
			goto oom;
		goto out;
	}
	if (!rep->json && !rep->count)
		printf("OK %s: within every limit (%u process image%s checked%s)\n", name,
		       plan_file_header(plan)->image_count,
		       plan_file_header(plan)->image_count == 1 ? "" : "s",
		       fresh ? "; some new since the baseline, whose growth is not measured" : "");
	if (rep->json) {
		fclose(rep->violations);
		rep->violations = NULL;
		printf("{\"plan\":");
		json_print_text(stdout, path);
		printf(",\"baseline\":");
		json_print_text(stdout, lim->baseline);
		printf(",\"passed\":%s,\"images\":%u,\"new_images\":%zu,\"violations\":[%.*s]}\n",
		       rep->count ? "false" : "true", plan_file_header(plan)->image_count, fresh,
		       (int)rep->violations_bytes, rep->violations_text);
	}
	status = stdout_end(stdout);
	if (status < 0) {
		fprintf(stderr, "memplan: cannot write the output\n");
		status = 1;
	} else if (!status)
		status = rep->count ? 1 : 0;
	goto out;
oom:
	fprintf(stderr, "memplan: out of memory\n");
out:
	plan_comparison_free(&cmp);
	symbolizer_free(sym);
	if (plan)
		plan_file_unmap((void *)plan, plan_len);
	if (base)
		plan_file_unmap((void *)base, base_len);
	return status;
}

static int cmd_check_body(int argc, char **argv)
{
	static const struct option options[] = {
	    {"baseline", required_argument, NULL, 'b'},
	    {"max-growth", required_argument, NULL, 'g'},
	    {"max-peak", required_argument, NULL, 'p'},
	    {"max-allocs", required_argument, NULL, 'a'},
	    {"min-hit-rate", required_argument, NULL, 'r'},
	    {"stats", required_argument, NULL, 's'},
	    {"json", no_argument, NULL, 'j'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	struct limits lim = {0};
	struct report rep = {0};
	int c;

	optind = 1;
	while ((c = cli_getopt(argc, argv, "b:g:p:a:r:s:jh", options)) != -1) {
		switch (c) {
		case 'b':
			lim.baseline = optarg;
			break;
		case 'g':
			if (cli_parse_percent(optarg, &lim.max_growth_pct) < 0)
				return usage("--max-growth takes a percentage, such as 5 or 2.5");
			lim.growth = true;
			break;
		case 'p':
			if (cli_parse_count(optarg, &lim.max_peak_bytes) < 0)
				return usage("--max-peak takes a whole number of bytes");
			lim.peak = true;
			break;
		case 'a':
			if (cli_parse_count(optarg, &lim.max_allocs) < 0)
				return usage("--max-allocs takes a whole number");
			lim.allocs = true;
			break;
		case 'r':
			if (cli_parse_percent(optarg, &lim.min_hit_rate_pct) < 0 ||
			    lim.min_hit_rate_pct > 100)
				return usage("--min-hit-rate takes a percentage from 0 to 100");
			lim.hit_rate = true;
			break;
		case 's':
			lim.stats = optarg;
			break;
		case 'j':
			rep.json = true;
			break;
		case 'h':
			return usage(NULL);
		default:
			return usage("");
		}
	}
	if (optind + 1 != argc)
		return usage("exactly one PLAN is needed");
	if (!lim.growth && !lim.peak && !lim.allocs && !lim.hit_rate)
		return usage("no limit given");
	if (lim.growth && !lim.baseline)
		return usage("--max-growth needs --baseline BASE");
	if (lim.hit_rate != (lim.stats != NULL))
		return usage("--min-hit-rate and --stats FILE go together");
	if (rep.json &&
	    !(rep.violations = open_memstream(&rep.violations_text, &rep.violations_bytes))) {
		fprintf(stderr, "memplan: out of memory\n");
		return 1;
	}
	/* Control characters of the paths are escaped in text, as a plan's own. */
	char *name = text_safe_dup(argv[optind]);
	lim.baseline_name = lim.baseline ? text_safe_dup(lim.baseline) : NULL;
	lim.stats_name = lim.stats ? text_safe_dup(lim.stats) : NULL;
	int status = 1;
	if (!name || (lim.baseline && !lim.baseline_name) || (lim.stats && !lim.stats_name))
		fprintf(stderr, "memplan: out of memory\n");
	else
		status = check_plan(argv[optind], name, &lim, &rep);
	free(name);
	free(lim.baseline_name);
	free(lim.stats_name);
	if (rep.violations)
		fclose(rep.violations);
	free(rep.violations_text);
	return status;
}

/* On a stack deep enough for the symbols it reads (deep_stack.h). */
int cmd_check(int argc, char **argv)
{
	return deep_stack_main(cmd_check_body, argc, argv);
}
