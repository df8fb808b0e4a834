/* memplan show [--json | --svg] [--top N|all] [--all] [--exe NAME] [--bytes] PLAN
 * What a plan says: first a table of its process images, the one with the
 * highest requested peak first (show_images.h); then, for the first few, or
 * all with --all, allocations, call sites, arena size against the lower bound,
 * the requested peak, and the call sites holding the most bytes at the peak,
 * named by their stored symbols (frame_symbols.h). --json prints one object
 * for scripts (keys are a stable contract: allocations, arena_bytes,
 * lower_bound_bytes, sites, and images[] per image, in the plan's order). */
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
#include "frame_symbols.h"
#include "image_label.h"
#include "image_match.h"
#include "json_print.h"
#include "plan_file.h"
#include "plan_summary.h"
#include "plan_svg.h"
#include "show_images.h"
#include "size_text.h"
#include "stdout_end.h"
#include "text_safe.h"

/* Room for a frame's name: C++ template names run past a thousand bytes. */
#define FRAME_NAME_BYTES 4096

/* Prints the usage: to stdout for --help (why NULL; returns 0), else to stderr
 * after the reason, if any (getopt has already named a bad option), returning 2. */
static int usage(const char *why)
{
	FILE *out = why ? stderr : stdout;

	if (why && *why)
		fprintf(stderr, "memplan: show: %s\n", why);
	fprintf(out, "usage: memplan show [--json | --svg] [--top N|all] [--all] [--exe NAME]\n"
		     "                    [--bytes] PLAN\n");
	if (why)
		return 2;
	fprintf(out,
		"\n"
		"Prints what a plan says. First a table of its process images, one line\n"
		"each, the highest requested peak first: peak, arena, allocations and the\n"
		"command. Then, for the first %d images, their allocations, call sites,\n"
		"arena, lower bound (the most bytes live at once: no arena is smaller),\n"
		"requested peak (the most bytes the program asked for live at once), and\n"
		"the call sites holding the most bytes at the peak, named by the symbols\n"
		"stored in the plan (looked up in the binaries for a plan that has none),\n"
		"libc's start-up frames below main left out. Their \"planned\" column says\n"
		"how replay serves each: exact (the occurrences recorded, each at its own\n"
		"offset; later ones go to libc), tail N (later ones take the places of\n"
		"its last N, in turn) or pools N (later ones take any free one of N\n"
		"slots).\n"
		"\n"
		"options:\n"
		"  -j, --json        one JSON object, for scripts: every image, in the\n"
		"                    plan's order, sizes in bytes (default: text)\n"
		"  -s, --svg         an SVG picture of the image with the biggest arena\n"
		"                    (default: text)\n"
		"  -t, --top N       call sites listed per image, or all (default 10; 0:\n"
		"                    none, the figures only)\n"
		"  -a, --all         every image in the table and in detail (default: the\n"
		"                    first %d in the table, %d in detail)\n"
		"  -e, --exe NAME    only the images of executables whose file name, path\n"
		"                    or argv[0] matches NAME, a shell pattern such as\n"
		"                    'python3*'; may be given more than once (default:\n"
		"                    every image)\n"
		"  -b, --bytes       sizes in bytes (default: KiB, MiB, GiB)\n"
		"  -h, --help        this help\n"
		"\n"
		"examples:\n"
		"  memplan show app.plan\n"
		"  memplan show --exe 'python3*' --top all --bytes run.plan\n"
		"  memplan show --svg app.plan > app.svg\n",
		SHOW_DETAILED_IMAGES, SHOW_TABLE_ROWS, SHOW_DETAILED_IMAGES);
	return 0;
}

/* How a site is planned: "exact" (entries only), "pools" (and pools for its
 * steady state), "tail" (and its last entries' places for it). */
static const char *site_kind(const struct plan_site *site)
{
	return site->pool_count ? "pools" : site->tail_entries ? "tail" : "exact";
}

/* The slots and bytes of a site's pools (all the image's, for UINT32_MAX). */
static void pool_totals(const struct plan_image *im, uint32_t site, uint64_t *slots,
			uint64_t *bytes)
{
	*slots = *bytes = 0;
	for (uint32_t k = 0; k < im->record.pool_count; k++) {
		const struct plan_pool *p = &im->pools[k];
		if (site != UINT32_MAX && p->site != site)
			continue;
		*slots += p->slot_count;
		*bytes += p->slot_count * p->slot_bytes;
	}
}

static void print_image_text(FILE *out, struct symbolizer *sym, const struct plan_image *im,
			     const struct site_summary *sums, uint32_t top, uint64_t peak_bytes,
			     bool exact)
{
	const struct plan_image_record *r = &im->record;
	uint64_t slots, pool_bytes;
	char a[32], b[32], c[32], d[32];

	fputs("image: ", out);
	text_safe_fputs(im->strings + r->exe_path_offset, out);
	fprintf(out, " (pid %u%s)\n", r->pid,
		r->flags & PLAN_IMAGE_FORKED ? ", forked without exec" : "");
	char command[8192]; /* a longer one (a recording keeps 32 KiB) ends in "..." */
	image_label_command(im, image_match_label, command, sizeof(command));
	fprintf(out, "  command:      %s\n", command);
	/* Counts with separators, as in the heading and the table above. */
	fprintf(out, "  allocations:  %s recorded of %s calls: %s exact, %s folded into pools\n",
		count_text(a, sizeof(a), plan_summary_figures(im).allocations),
		count_text(b, sizeof(b), r->alloc_calls), count_text(c, sizeof(c), r->entry_count),
		count_text(d, sizeof(d), r->folded_count));
	fprintf(out, "  call sites:   %s (depth %u)\n", count_text(a, sizeof(a), r->site_count),
		r->depth);
	fprintf(out, "  arena:        %s\n", size_text(a, sizeof(a), r->arena_bytes, exact));
	/* An image that allocated nothing has no bound nor arena to compare. */
	fprintf(out, "  lower bound:  %s (most bytes live at once",
		size_text(a, sizeof(a), r->lower_bound_bytes, exact));
	if (r->lower_bound_bytes)
		fprintf(out, "; arena is %.4fx",
			(double)r->arena_bytes / (double)r->lower_bound_bytes);
	fputs(")\n", out);
	fprintf(out, "  requested peak: %s (most bytes the program asked for live at once)\n",
		size_text(a, sizeof(a), r->requested_peak_bytes, exact));
	pool_totals(im, UINT32_MAX, &slots, &pool_bytes);
	fprintf(out, "  steady state: %s pools of %s slots, %s",
		count_text(b, sizeof(b), r->pool_count), count_text(c, sizeof(c), slots),
		size_text(a, sizeof(a), pool_bytes, exact));
	if (r->arena_bytes)
		fprintf(out, " (%.1f%% of the arena)",
			100.0 * (double)pool_bytes / (double)r->arena_bytes);
	fputs("; exact entries in the rest\n", out);
	if (r->flags & PLAN_IMAGE_THREAD_REGIONS)
		fprintf(out, "  threads:      each in a region of the arena of its own\n");
	fprintf(out, "  symbols:      %s\n",
		r->symbol_count ? "stored in the plan when recorded"
				: "none stored; looked up in the binaries now");
	fprintf(out, "  frame sizes:  %s (replay walks stacks through them without unwinding)\n",
		count_text(a, sizeof(a), r->frame_size_count));
	/* --top 0 asks for no sites: no table of none. */
	if (!r->site_count || !top)
		return;
	fprintf(out, "  top call sites by bytes live at the peak (%s requested):\n",
		size_text(a, sizeof(a), peak_bytes, exact));
	fprintf(out, "    %12s %8s %10s %-11s %s\n", "at peak", "blocks", "allocs", "planned",
		"site");
	for (uint32_t i = 0; i < top && i < r->site_count; i++) {
		const struct site_summary *s = &sums[i];
		const struct plan_site *site = &im->sites[s->site];
		char kind[32];
		pool_totals(im, s->site, &slots, &pool_bytes);
		if (site->pool_count)
			snprintf(kind, sizeof(kind), "pools %" PRIu64, slots);
		else if (site->tail_entries)
			snprintf(kind, sizeof(kind), "tail %u", site->tail_entries);
		else
			snprintf(kind, sizeof(kind), "exact");
		if (exact)
			snprintf(b, sizeof(b), "%" PRIu64, s->bytes_at_peak);
		else
			size_text(b, sizeof(b), s->bytes_at_peak, false);
		fprintf(out, "    %12s %8s %10s %-11s ", b,
			count_text(c, sizeof(c), s->blocks_at_peak),
			count_text(d, sizeof(d), s->allocations), kind);
		uint32_t shown = frame_symbols_shown(im, s->site, sym);
		for (uint32_t f = 0; f < shown; f++) {
			char name[FRAME_NAME_BYTES];
			frame_symbols_format(im, site->first_frame + f, sym, name, sizeof(name));
			if (f)
				fprintf(out, "    %12s %8s %10s %-11s   ", "", "", "", "");
			fputs(f ? "<- " : "", out);
			text_safe_fputs(name, out);
			fputc('\n', out);
		}
		if (!shown)
			fputs(site->frame_count ? "(libc start-up)\n" : "(no frames)\n", out);
	}
}

/* The functions of a site's first frames, innermost first, as objects. */
static void print_functions_json(FILE *out, struct symbolizer *sym, const struct plan_image *im,
				 const struct plan_site *site, uint32_t frames)
{
	bool first = true;

	for (uint32_t f = 0; f < frames; f++) {
		struct frame_symbol symbols[FRAME_SYMBOLS_MAX];
		const struct plan_frame *frame = &im->frames[site->first_frame + f];
		unsigned n =
		    frame_symbols_get(im, site->first_frame + f, sym, symbols, FRAME_SYMBOLS_MAX);
		for (unsigned k = 0; k < n; k++, first = false) {
			if (!first)
				fputc(',', out);
			json_print_function(out, symbols[k].function,
					    frame_symbols_module_name(im, frame->module),
					    symbols[k].file, symbols[k].line, symbols[k].inlined);
		}
	}
}

static void print_image_json(FILE *out, struct symbolizer *sym, const struct plan_image *im,
			     const struct site_summary *sums, uint32_t top, uint64_t t_peak)
{
	const struct plan_image_record *r = &im->record;

	fprintf(out, "{\"exe\":");
	json_print_string(out, im->strings + r->exe_path_offset, r->exe_path_bytes);
	fprintf(out, ",\"args\":");
	json_print_args(out, im);
	uint64_t slots, pool_bytes;
	pool_totals(im, UINT32_MAX, &slots, &pool_bytes);
	fprintf(out,
		",\"pid\":%u,\"depth\":%u,\"allocations\":%" PRIu64 ",\"alloc_calls\":%" PRIu64
		",\"exact_entries\":%" PRIu64 ",\"folded\":%" PRIu64 ",\"pools\":%u"
		",\"pool_slots\":%" PRIu64 ",\"pool_bytes\":%" PRIu64 ",\"arena_bytes\":%" PRIu64
		",\"lower_bound_bytes\":%" PRIu64 ",\"requested_peak_bytes\":%" PRIu64
		",\"sites\":%u,\"thread_regions\":%s,\"forked\":%s,\"symbols_stored\":%s"
		",\"frame_sizes\":%u,\"peak_time\":%" PRIu64 ",\"exe_key\":\"%016" PRIx64
		"\",\"args_key\":\"%016" PRIx64 "\",\"top_sites\":[",
		r->pid, r->depth, plan_summary_figures(im).allocations, r->alloc_calls,
		r->entry_count, r->folded_count, r->pool_count, slots, pool_bytes, r->arena_bytes,
		r->lower_bound_bytes, r->requested_peak_bytes, r->site_count,
		r->flags & PLAN_IMAGE_THREAD_REGIONS ? "true" : "false",
		r->flags & PLAN_IMAGE_FORKED ? "true" : "false", r->symbol_count ? "true" : "false",
		r->frame_size_count, t_peak, r->exe_key, r->args_key);
	for (uint32_t i = 0; i < top && i < r->site_count; i++) {
		const struct site_summary *s = &sums[i];
		const struct plan_site *site = &im->sites[s->site];
		pool_totals(im, s->site, &slots, &pool_bytes);
		fprintf(out,
			"%s{\"site\":%u,\"key\":\"%016" PRIx64 "\",\"bytes_at_peak\":%" PRIu64
			",\"blocks_at_peak\":%" PRIu64 ",\"allocations\":%" PRIu64
			",\"total_bytes\":%" PRIu64 ",\"kind\":\"%s\",\"entries\":%" PRIu64
			",\"slots\":%" PRIu64 ",\"pool_bytes\":%" PRIu64 ",\"tail_entries\":%u,",
			i ? "," : "", s->site, site->key, s->bytes_at_peak, s->blocks_at_peak,
			s->allocations, s->total_bytes, site_kind(site), site->entry_count, slots,
			pool_bytes, site->tail_entries);
		fprintf(out, "\"pools\":[");
		for (uint32_t k = 0; k < site->pool_count; k++) {
			const struct plan_pool *p = &im->pools[site->first_pool + k];
			fprintf(out,
				"%s{\"slot_bytes\":%" PRIu64 ",\"slots\":%u,\"chunks\":%u"
				",\"max_live\":%u,\"allocs\":%" PRIu64 "}",
				k ? "," : "", p->slot_bytes, p->slot_count, p->chunk_count,
				p->max_live, p->allocs);
		}
		uint32_t shown = frame_symbols_shown(im, s->site, sym);
		fprintf(out, "],\"frames\":[");
		for (uint32_t f = 0; f < shown; f++) {
			char name[FRAME_NAME_BYTES];
			frame_symbols_format(im, site->first_frame + f, sym, name, sizeof(name));
			if (f)
				fputc(',', out);
			json_print_text(out, name);
		}
		fprintf(out, "],\"functions\":[");
		print_functions_json(out, sym, im, site, shown);
		fprintf(out, "]}");
	}
	fprintf(out, "]}");
}

/* The totals of the chosen images. */
static struct plan_figures total_figures(const void *buf, const uint32_t *order, uint32_t count,
					 uint64_t *sites)
{
	struct plan_figures total = {0};

	*sites = 0;
	for (uint32_t i = 0; i < count; i++) {
		struct plan_image im;
		plan_file_image(buf, order[i], &im);
		struct plan_figures f = plan_summary_figures(&im);
		total.allocations += f.allocations;
		total.arena_bytes += f.arena_bytes;
		total.lower_bound_bytes += f.lower_bound_bytes;
		total.requested_peak_bytes += f.requested_peak_bytes;
		*sites += im.record.site_count;
	}
	return total;
}

static int by_index(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

struct show_options {
	bool json, svg, all, exact;
	uint32_t top;
	char **patterns;
	size_t pattern_count;
};

/* Prints the images in order (count of them; all the plan's images_total)
 * as text or JSON, of the plan at path (name: escaped, for text). Returns the
 * exit status. */
static int show_images(const char *path, const char *name, const void *buf, uint32_t *order,
		       uint32_t count, const struct show_options *o, struct symbolizer *sym)
{
	const struct plan_file_header *h = plan_file_header(buf);
	uint64_t sites;
	struct plan_figures total = total_figures(buf, order, count, &sites);
	uint32_t detailed = o->all || o->json || count <= SHOW_DETAILED_IMAGES + 1
				? count
				: SHOW_DETAILED_IMAGES;
	char a[32], b[32], c[32], d[32];

	if (o->json) {
		/* Scripts index images[] in the plan's order. */
		qsort(order, count, sizeof(*order), by_index);
		printf("{\"file\":");
		json_print_text(stdout, path);
		/* The record id in hex, as the keys: a number above 2^53 is read
		 * rounded by jq 1.6 and JavaScript, and two ids would compare equal. */
		printf(",\"format_version\":%u,\"record_id\":\"%016" PRIx64
		       "\",\"allocations\":%" PRIu64 ",\"arena_bytes\":%" PRIu64
		       ",\"lower_bound_bytes\":%" PRIu64 ",\"requested_peak_bytes\":%" PRIu64
		       ",\"sites\":%" PRIu64 ",\"images\":[",
		       h->version, h->record_id, total.allocations, total.arena_bytes,
		       total.lower_bound_bytes, total.requested_peak_bytes, sites);
	} else {
		printf("plan: %s (%u process image%s", name, count, count == 1 ? "" : "s");
		if (count != h->image_count)
			printf(" of %u", h->image_count);
		printf("; totals: %s allocations, arena %s, lower bound %s, requested peak %s)\n",
		       count_text(a, sizeof(a), total.allocations),
		       size_text(b, sizeof(b), total.arena_bytes, o->exact),
		       size_text(c, sizeof(c), total.lower_bound_bytes, o->exact),
		       size_text(d, sizeof(d), total.requested_peak_bytes, o->exact));
		if (count > 1) {
			putchar('\n');
			show_images_table(stdout, buf, order, count, o->all, o->exact);
		}
		if (detailed < count)
			printf("\nThe %u highest peaks in detail (--all: every image, --exe NAME: "
			       "some):\n",
			       detailed);
	}
	for (uint32_t i = 0; i < detailed; i++) {
		struct plan_image im;
		struct site_summary *sums;
		uint64_t t_peak, peak_bytes;
		plan_file_image(buf, order[i], &im);
		if (plan_summary_sites(&im, &sums, &t_peak, &peak_bytes) < 0) {
			fprintf(stderr, "memplan: %s: out of memory\n", name);
			return 1;
		}
		if (o->json) {
			if (i)
				putchar(',');
			print_image_json(stdout, sym, &im, sums, o->top, t_peak);
		} else {
			putchar('\n');
			print_image_text(stdout, sym, &im, sums, o->top, peak_bytes, o->exact);
		}
		free(sums);
	}
	if (o->json)
		printf("]}\n");
	return 0;
}

static int cmd_show_body(int argc, char **argv)
{
	static const struct option options[] = {
	    {"json", no_argument, NULL, 'j'},
	    {"svg", no_argument, NULL, 's'},
	    {"top", required_argument, NULL, 't'},
	    {"all", no_argument, NULL, 'a'},
	    {"exe", required_argument, NULL, 'e'},
	    {"bytes", no_argument, NULL, 'b'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	struct show_options o = {.top = 10};
	char why[256], *name = NULL;
	const void *buf;
	size_t len;
	int c, status = 0;

	o.patterns = calloc((size_t)argc + 1, sizeof(*o.patterns));
	if (!o.patterns) {
		fprintf(stderr, "memplan: out of memory\n");
		return 1;
	}
	optind = 1;
	while ((c = cli_getopt(argc, argv, "jst:ae:bh", options)) != -1) {
		switch (c) {
		case 'j':
			o.json = true;
			break;
		case 's':
			o.svg = true;
			break;
		case 't':
			if (cli_parse_top(optarg, &o.top) < 0)
				status = usage("--top takes a whole number, or all");
			break;
		case 'a':
			o.all = true;
			break;
		case 'e':
			o.patterns[o.pattern_count++] = optarg;
			break;
		case 'b':
			o.exact = true;
			break;
		case 'h':
			status = usage(NULL);
			goto out;
		default:
			status = usage("");
		}
		if (status)
			goto out;
	}
	if (o.json && o.svg)
		status = usage("--json and --svg exclude each other");
	else if (optind + 1 != argc)
		status = usage("exactly one PLAN is needed");
	if (status)
		goto out;
	const char *path = argv[optind];
	/* Control characters of the path are escaped in text, as a plan's own. */
	if (!(name = text_safe_dup(path))) {
		fprintf(stderr, "memplan: out of memory\n");
		status = 1;
		goto out;
	}
	if (plan_file_map(path, &buf, &len, why, sizeof(why)) < 0) {
		fprintf(stderr, "memplan: %s: %s\n", name, why);
		status = 1;
		goto out;
	}

	uint32_t *order, count;
	struct symbolizer *sym = symbolizer_new();
	if (show_images_select(buf, o.patterns, o.pattern_count, &order, &count) < 0) {
		fprintf(stderr, "memplan: out of memory\n");
		status = 1;
	} else if (!count && o.pattern_count) {
		fprintf(stderr, "memplan: %s: no process image of an executable named %s%s\n", name,
			o.patterns[0], o.pattern_count > 1 ? " or the other names given" : "");
		status = 1;
	} else if (o.svg) {
		status = plan_svg_show(stdout, name, buf, order, count, sym);
	} else {
		status = show_images(path, name, buf, order, count, &o, sym);
		const int end = status ? 0 : stdout_end(stdout);
		if (end == STDOUT_END_READER_GONE)
			status = end;
		else if (end) {
			fprintf(stderr, "memplan: cannot write the output\n");
			status = 1;
		}
	}
	free(order);
	symbolizer_free(sym);
	plan_file_unmap((void *)buf, len);
out:
	free(name);
	free(o.patterns);
	return status;
}

/* On a stack deep enough for the symbols it reads (deep_stack.h). */
int cmd_show(int argc, char **argv)
{
	return deep_stack_main(cmd_show_body, argc, argv);
}
