/* memplan show [--json | --svg] [--top N|all] PLAN
 * What a plan says: per process image, allocations, call sites, arena size
 * against the lower bound, the requested peak, and the call sites holding the
 * most bytes at the peak, named by their stored symbols (frame_symbols.h).
 * --json prints one object for scripts (keys are a stable contract:
 * allocations, arena_bytes, lower_bound_bytes, sites, and images[] per image). */
#define _GNU_SOURCE
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_args.h"
#include "commands.h"
#include "frame_symbols.h"
#include "image_match.h"
#include "json_print.h"
#include "plan_file.h"
#include "plan_summary.h"
#include "plan_svg.h"

/* Prints the usage: to stdout for --help (why NULL; returns 0), else to stderr
 * after the reason, if any (getopt has already named a bad option), returning 2. */
static int usage(const char *why)
{
	FILE *out = why ? stderr : stdout;

	if (why && *why)
		fprintf(stderr, "memplan: show: %s\n", why);
	fprintf(out, "usage: memplan show [--json | --svg] [--top N|all] PLAN\n");
	if (why)
		return 2;
	fprintf(out, "Prints what a plan says of each process image: allocations, call sites,\n"
		     "arena, lower bound, requested peak, and the call sites holding the most\n"
		     "bytes at the peak, named by the symbols stored in the plan (looked up in\n"
		     "the binaries for a plan that has none). libc's start-up frames below main\n"
		     "are left out.\n"
		     "  --json     one JSON object, for scripts (default: text)\n"
		     "  --svg      an SVG picture of the image with the biggest arena\n"
		     "  --top N    call sites listed per image, or all (default 10)\n"
		     "example: memplan show --top all app.plan\n");
	return 0;
}

static double ratio(uint64_t a, uint64_t b)
{
	return b ? (double)a / (double)b : 1.0;
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
			     const struct site_summary *sums, uint32_t top, uint64_t peak_bytes)
{
	const struct plan_image_record *r = &im->record;
	uint64_t slots, pool_bytes;

	fprintf(out, "image: %s (pid %u%s)\n", im->strings + r->exe_path_offset, r->pid,
		r->flags & PLAN_IMAGE_FORKED ? ", forked without exec" : "");
	char command[8192]; /* recordings keep at most 4096 bytes of arguments */
	image_match_label(im, command, sizeof(command));
	fprintf(out, "  command:      %s\n", command);
	fprintf(out,
		"  allocations:  %" PRIu64 " recorded of %" PRIu64 " calls: %" PRIu64
		" exact, %" PRIu64 " folded into pools\n",
		plan_summary_figures(im).allocations, r->alloc_calls, r->entry_count,
		r->folded_count);
	fprintf(out, "  call sites:   %u (depth %u)\n", r->site_count, r->depth);
	fprintf(out, "  arena:        %" PRIu64 " bytes\n", r->arena_bytes);
	fprintf(out,
		"  lower bound:  %" PRIu64 " bytes (most bytes live at once; arena is %.4fx)\n",
		r->lower_bound_bytes, ratio(r->arena_bytes, r->lower_bound_bytes));
	fprintf(out,
		"  requested peak: %" PRIu64 " bytes (most bytes the program asked for live at "
		"once)\n",
		r->requested_peak_bytes);
	pool_totals(im, UINT32_MAX, &slots, &pool_bytes);
	fprintf(out,
		"  steady state: %u pools of %" PRIu64 " slots, %" PRIu64
		" bytes (%.1f%% of the arena); exact entries in the rest\n",
		r->pool_count, slots, pool_bytes, 100.0 * ratio(pool_bytes, r->arena_bytes));
	if (r->flags & PLAN_IMAGE_THREAD_REGIONS)
		fprintf(out, "  threads:      each in a region of the arena of its own\n");
	fprintf(out, "  symbols:      %s\n",
		r->symbol_count ? "stored in the plan when recorded"
				: "none stored; looked up in the binaries now");
	if (!r->site_count)
		return;
	fprintf(out, "  top call sites by bytes live at the peak (%" PRIu64 " requested bytes):\n",
		peak_bytes);
	fprintf(out, "    %14s %8s %10s %-14s %s\n", "bytes@peak", "blocks", "allocs", "planned",
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
		fprintf(out, "    %14" PRIu64 " %8" PRIu64 " %10" PRIu64 " %-14s ",
			s->bytes_at_peak, s->blocks_at_peak, s->allocations, kind);
		uint32_t shown = frame_symbols_shown(im, s->site, sym);
		for (uint32_t f = 0; f < shown; f++) {
			char name[1024];
			frame_symbols_format(im, site->first_frame + f, sym, name, sizeof(name));
			if (f)
				fprintf(out, "    %14s %8s %10s %-14s     ", "", "", "", "");
			fprintf(out, "%s\n", name);
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
		",\"peak_time\":%" PRIu64 ",\"exe_key\":\"%016" PRIx64
		"\",\"args_key\":\"%016" PRIx64 "\",\"top_sites\":[",
		r->pid, r->depth, plan_summary_figures(im).allocations, r->alloc_calls,
		r->entry_count, r->folded_count, r->pool_count, slots, pool_bytes, r->arena_bytes,
		r->lower_bound_bytes, r->requested_peak_bytes, r->site_count,
		r->flags & PLAN_IMAGE_THREAD_REGIONS ? "true" : "false",
		r->flags & PLAN_IMAGE_FORKED ? "true" : "false", r->symbol_count ? "true" : "false",
		t_peak, r->exe_key, r->args_key);
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
			char name[1024];
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

int cmd_show(int argc, char **argv)
{
	static const struct option options[] = {
	    {"json", no_argument, NULL, 'j'},
	    {"svg", no_argument, NULL, 's'},
	    {"top", required_argument, NULL, 't'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	bool json = false, svg = false;
	uint32_t top = 10;
	char why[256];
	const void *buf;
	size_t len;
	int c, status = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "jst:h", options, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 's':
			svg = true;
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
	if (optind + 1 != argc)
		return usage("exactly one PLAN is needed");
	const char *path = argv[optind];
	if (plan_file_map(path, &buf, &len, why, sizeof(why)) < 0) {
		fprintf(stderr, "memplan: %s: %s\n", path, why);
		return 1;
	}

	const struct plan_file_header *h = plan_file_header(buf);
	struct symbolizer *sym = symbolizer_new();
	if (svg) {
		status = plan_svg_show(stdout, path, buf, sym);
		symbolizer_free(sym);
		plan_file_unmap((void *)buf, len);
		return status;
	}
	struct plan_figures total = {0};
	uint64_t sites = 0;
	for (uint32_t i = 0; i < h->image_count; i++) {
		struct plan_image im;
		plan_file_image(buf, i, &im);
		struct plan_figures f = plan_summary_figures(&im);
		total.allocations += f.allocations;
		total.arena_bytes += f.arena_bytes;
		total.lower_bound_bytes += f.lower_bound_bytes;
		total.requested_peak_bytes += f.requested_peak_bytes;
		sites += im.record.site_count;
	}
	if (json) {
		printf("{\"file\":");
		json_print_text(stdout, path);
		printf(",\"format_version\":%u,\"record_id\":%" PRIu64 ",\"allocations\":%" PRIu64
		       ",\"arena_bytes\":%" PRIu64 ",\"lower_bound_bytes\":%" PRIu64
		       ",\"requested_peak_bytes\":%" PRIu64 ",\"sites\":%" PRIu64 ",\"images\":[",
		       h->version, h->record_id, total.allocations, total.arena_bytes,
		       total.lower_bound_bytes, total.requested_peak_bytes, sites);
	} else {
		printf("plan: %s (%u process image%s; totals: %" PRIu64
		       " allocations, arena %" PRIu64 " bytes, lower bound %" PRIu64
		       " bytes, requested peak %" PRIu64 " bytes)\n",
		       path, h->image_count, h->image_count == 1 ? "" : "s", total.allocations,
		       total.arena_bytes, total.lower_bound_bytes, total.requested_peak_bytes);
	}
	for (uint32_t i = 0; i < h->image_count; i++) {
		struct plan_image im;
		struct site_summary *sums;
		uint64_t t_peak, peak_bytes;
		plan_file_image(buf, i, &im);
		if (plan_summary_sites(&im, &sums, &t_peak, &peak_bytes) < 0) {
			fprintf(stderr, "memplan: %s: out of memory\n", path);
			status = 1;
			break;
		}
		if (json) {
			if (i)
				putchar(',');
			print_image_json(stdout, sym, &im, sums, top, t_peak);
		} else {
			putchar('\n');
			print_image_text(stdout, sym, &im, sums, top, peak_bytes);
		}
		free(sums);
	}
	if (json)
		printf("]}\n");
	symbolizer_free(sym);
	plan_file_unmap((void *)buf, len);
	if (fflush(stdout) != 0) {
		fprintf(stderr, "memplan: cannot write the output\n");
		return 1;
	}
	return status;
}
