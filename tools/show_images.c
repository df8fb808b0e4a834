/* Choosing and tabulating a plan's process images, see show_images.h. */
#define _GNU_SOURCE
#include "show_images.h"

#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "image_label.h"
#include "image_match.h"
#include "plan_summary.h"
#include "size_text.h"
#include "text_safe.h"

/* The columns: peak and arena as sizes, allocations as a count, then the
 * command, cut so that a line fits in 80 columns. */
#define COL_SIZE    10
#define COL_COUNT   11
#define COL_COMMAND (80 - 2 - 2 * (COL_SIZE + 1) - (COL_COUNT + 1))
/* Names counted in the line for the images left out of the table. */
#define REST_NAMES 3

struct ranked {
	uint32_t index;
	uint64_t peak_bytes, arena_bytes;
};

static int by_peak_desc(const void *pa, const void *pb)
{
	const struct ranked *a = pa, *b = pb;

	if (a->peak_bytes != b->peak_bytes)
		return a->peak_bytes < b->peak_bytes ? 1 : -1;
	if (a->arena_bytes != b->arena_bytes)
		return a->arena_bytes < b->arena_bytes ? 1 : -1;
	return (a->index > b->index) - (a->index < b->index);
}

/* Whether the image's executable (its file name or path) or its argv[0] (the
 * name it was run by: sh for dash, python3 for python3.11), as it was given
 * (./app) or by its file name, matches one of the patterns. */
static bool matches(const struct plan_image *im, char *const *patterns, size_t count)
{
	const char *path = im->strings + im->record.exe_path_offset;
	const char *argv0 = image_match_next_arg(im, NULL), *slash;
	const char *argv0_name = argv0 && (slash = strrchr(argv0, '/')) ? slash + 1 : argv0;

	if (!count)
		return true;
	for (size_t i = 0; i < count; i++)
		if (!fnmatch(patterns[i], image_match_exe_name(im), 0) ||
		    !fnmatch(patterns[i], path, 0) ||
		    (argv0 &&
		     (!fnmatch(patterns[i], argv0, 0) || !fnmatch(patterns[i], argv0_name, 0))))
			return true;
	return false;
}

int show_images_select(const void *buf, char *const *patterns, size_t pattern_count,
		       uint32_t **order, uint32_t *count)
{
	uint32_t n = plan_file_header(buf)->image_count, kept = 0;
	struct ranked *ranks = calloc(n ? n : 1, sizeof(*ranks));

	*order = calloc(n ? n : 1, sizeof(**order));
	if (!ranks || !*order) {
		free(ranks);
		free(*order);
		*order = NULL;
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < n; i++) {
		struct plan_image im;
		plan_file_image(buf, i, &im);
		if (!matches(&im, patterns, pattern_count))
			continue;
		struct plan_figures f = plan_summary_figures(&im);
		ranks[kept++] = (struct ranked){i, f.requested_peak_bytes, f.arena_bytes};
	}
	qsort(ranks, kept, sizeof(*ranks), by_peak_desc);
	for (uint32_t i = 0; i < kept; i++)
		(*order)[i] = ranks[i].index;
	*count = kept;
	free(ranks);
	return 0;
}

/* The command of an image, its executable's file name for argv[0], in out
 * (cap bytes), cut with "..." where it does not fit. */
static void command_text(const struct plan_image *im, char *out, size_t cap)
{
	const char *first = image_match_next_arg(im, NULL), *exe = image_match_exe_name(im);
	size_t at = 0;
	bool fits = image_label_name(out, cap, &at, exe, first);

	for (const char *a = first ? image_match_next_arg(im, first) : NULL; a && fits;
	     a = image_match_next_arg(im, a))
		fits = text_safe_append(out, cap, &at, " ", 1) &&
		       text_safe_append(out, cap, &at, a, strlen(a));
	if (!fits && cap > 4)
		strcpy(out + (at < cap - 4 ? at : cap - 4), "...");
}

/* The line for the images past the table: how many, and their names, the most
 * frequent first, the others counted so that the counts add up ("45 more: 30
 * sh, 10 sed, 3 cat and 2 others"). */
static void print_rest(FILE *out, const void *buf, const uint32_t *order, uint32_t from,
		       uint32_t count)
{
	struct name_count {
		const char *name, *argv0; /* the executable's; argv[0], or NULL */
		uint32_t n;
	} *names = calloc(count - from, sizeof(*names));
	size_t distinct = 0;
	uint32_t others = count - from;

	fprintf(out, "  ... %u more", count - from);
	for (uint32_t i = from; names && i < count; i++) {
		struct plan_image im;
		plan_file_image(buf, order[i], &im);
		const char *name = image_match_exe_name(&im),
			   *argv0 = image_match_next_arg(&im, NULL);
		char label[512], seen[512];
		size_t k = 0, at = 0;
		image_label_name(label, sizeof(label), &at, name, argv0);
		for (; k < distinct; k++) {
			at = 0;
			image_label_name(seen, sizeof(seen), &at, names[k].name, names[k].argv0);
			if (!strcmp(seen, label))
				break;
		}
		if (k == distinct)
			names[distinct++] = (struct name_count){name, argv0, 0};
		names[k].n++;
	}
	/* A few passes for the most frequent: there are at most REST_NAMES. */
	for (int shown = 0; names && shown < REST_NAMES && distinct; shown++) {
		size_t best = 0;
		for (size_t k = 1; k < distinct; k++)
			if (names[k].n > names[best].n)
				best = k;
		if (!names[best].n)
			break;
		char label[512];
		size_t at = 0;
		image_label_name(label, sizeof(label), &at, names[best].name, names[best].argv0);
		fprintf(out, "%s %u %s", shown ? "," : ":", names[best].n, label);
		others -= names[best].n;
		names[best].n = 0;
	}
	if (names && others)
		fprintf(out, " and %u other%s", others, others == 1 ? "" : "s");
	fprintf(out, " (--all lists them)\n");
	free(names);
}

void show_images_table(FILE *out, const void *buf, const uint32_t *order, uint32_t count, bool all,
		       bool exact)
{
	uint32_t rows = all || count <= SHOW_TABLE_ROWS + 1 ? count : SHOW_TABLE_ROWS;

	fprintf(out, "  %*s %*s %*s %s\n", COL_SIZE, "peak", COL_SIZE, "arena", COL_COUNT,
		"allocations", "command");
	for (uint32_t i = 0; i < rows; i++) {
		struct plan_image im;
		char peak[32], arena[32], allocs[32], command[COL_COMMAND + 1];
		plan_file_image(buf, order[i], &im);
		struct plan_figures f = plan_summary_figures(&im);
		image_label(&im, command_text, command, sizeof(command));
		if (exact) {
			snprintf(peak, sizeof(peak), "%" PRIu64, f.requested_peak_bytes);
			snprintf(arena, sizeof(arena), "%" PRIu64, f.arena_bytes);
		} else {
			size_text(peak, sizeof(peak), f.requested_peak_bytes, false);
			size_text(arena, sizeof(arena), f.arena_bytes, false);
		}
		fprintf(out, "  %*s %*s %*s %s\n", COL_SIZE, peak, COL_SIZE, arena, COL_COUNT,
			count_text(allocs, sizeof(allocs), f.allocations), command);
	}
	if (rows < count)
		print_rest(out, buf, order, rows, count);
}
