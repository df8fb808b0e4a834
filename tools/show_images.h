/* Which process images `memplan show` reports, in which order, and the table
 * it prints of them first: a plan of a shell script or of `make` holds dozens
 * of images, and the one that matters must come first, on one screen. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "plan_file.h"

/* The rows of the summary table, without --all. */
#define SHOW_TABLE_ROWS 15
/* The images described in detail, without --all. */
#define SHOW_DETAILED_IMAGES 3

/* Fills *order (malloc'ed, *count entries) with the indices of the images of
 * the validated plan buffer whose executable matches one of the count_patterns
 * shell patterns (fnmatch) by its file name or its path, or whose argv[0]
 * does as it was given or by its file name (every image for no patterns),
 * sorted by requested peak, then arena, largest first, then by index.
 * Returns 0 or -ENOMEM. May allocate. */
int show_images_select(const void *buf, char *const *patterns, size_t pattern_count,
		       uint32_t **order, uint32_t *count);

/* Writes the summary table of the images in order (count of them) to out: one
 * line each, its requested peak, arena and allocations, and its command with
 * the arguments cut to fit 80 columns; at most SHOW_TABLE_ROWS lines and one
 * for the rest unless all. exact: sizes in bytes. */
void show_images_table(FILE *out, const void *buf, const uint32_t *order, uint32_t count, bool all,
		       bool exact);
