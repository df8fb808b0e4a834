/* `memplan show --svg`: a picture of one process image's plan, as SVG.
 *
 * Time (the plan's event index) runs across, arena offset runs up, and every block
 * is drawn where the plan puts it, coloured by call site: the sites that hold the
 * most bytes at the peak get their own colours and a legend line, all others are
 * grey. Lines mark the arena size and the lower bound. A plan may hold millions of
 * blocks, so the blocks are not drawn one by one: they are rasterised onto a fixed
 * grid, each cell takes the colour of the site that covers most of it and a shade
 * for how full it is, and runs of equal cells become one rectangle. The picture's
 * size is thus bounded by the grid, not by the plan. */
#pragma once

#include <stdint.h>
#include <stdio.h>

#include "plan_file.h"

struct symbolizer;

/* Writes an SVG document for image to out. Frames are named by the symbols stored
 * in the plan, else by sym's (NULL: as module+offset). Entries are not trusted to be free of overlaps or in range:
 * anything outside the axes is clipped. Returns 0, -ENOMEM, or -EIO if writing to
 * out failed. May allocate. Not thread-safe (the symbolizer is not). */
int plan_svg_write(FILE *out, const struct plan_image *image, struct symbolizer *sym);

/* For `memplan show --svg`: draws the process image with the biggest arena of
 * the count images given by index, of a validated plan buffer, to out.
 * Returns the command's exit status: 0, or 1 after one line on stderr naming
 * the plan by name (its path, escaped: text_safe.h). May allocate. */
int plan_svg_show(FILE *out, const char *name, const void *buf, const uint32_t *images,
		  uint32_t count, struct symbolizer *sym);
