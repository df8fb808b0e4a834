/* `memplan show --svg`: rasterises one image's plan onto a fixed grid and writes it
 * as SVG (see plan_svg.h for what the picture shows).
 *
 * Each block is a rectangle in (time, offset) space. Its coverage of a grid cell is
 * the product of its overlap with the cell's column and with the cell's row, so a
 * block splits into at most 3 x 3 pieces of constant coverage (partial edge
 * columns/rows and a full interior), and each piece is one update of a 2D difference
 * array per colour class. Rasterising costs O(blocks + cells), however long or tall
 * the blocks are, and a million blocks render in well under a second. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame_symbols.h"
#include "plan_summary.h"
#include "plan_svg.h"
#include "size_text.h"
#include "stdout_end.h"
#include "utf8.h"

#define GRID_W	    800
#define GRID_H	    400
#define TOP_SITES   8
#define CLASSES	    (TOP_SITES + 1) /* class 0: every other site */
#define SHADES	    4
#define PLOT_X	    100
#define PLOT_Y	    56
#define LEGEND_LINE 17
/* Text must fit the picture's width. Characters of DejaVu Sans, the usual
 * sans-serif, average under 0.6 em; a legend line (10 px) gets 6.2 pixels a
 * character, the title (14 px bold) 9, so that names of wide letters fit too. */
#define LEGEND_CHARS ((size_t)((GRID_W + 30 - 18 - 10) / 6.2))
#define TITLE_CHARS  ((size_t)((GRID_W + 30 - 10) / 9.0) - 16) /* " (pid N)" after it */

static const char *const class_colour[CLASSES] = {
    "#9e9e9e", "#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd",
    "#8c564b", "#e377c2", "#17becf", "#bcbd22",
};

/* One axis-aligned piece of a block: cells [from, to], weight along that axis. */
struct span {
	int from, to;
	double weight;
};

/* Splits [a, b) (in cell units, clipped to [0, n)) into at most three spans of
 * constant coverage. Returns how many. */
static int split_span(double a, double b, int n, struct span out[3])
{
	if (a < 0)
		a = 0;
	if (b > n)
		b = n;
	if (!(b > a))
		return 0;
	int first = (int)floor(a), last = (int)ceil(b) - 1;
	if (last >= n)
		last = n - 1;
	if (first == last) {
		out[0] = (struct span){first, first, b - a};
		return 1;
	}
	int k = 0;
	out[k++] = (struct span){first, first, (first + 1) - a};
	if (last - first > 1)
		out[k++] = (struct span){first + 1, last - 1, 1.0};
	out[k++] = (struct span){last, last, b - last};
	return k;
}

/* The difference array of one class has (GRID_H + 1) x (GRID_W + 1) cells. */
static inline double *diff_at(double *d, int cls, int row, int col)
{
	return &d[((size_t)cls * (GRID_H + 1) + (size_t)row) * (GRID_W + 1) + (size_t)col];
}

static void add_rect(double *d, int cls, const struct span *x, const struct span *y)
{
	double v = x->weight * y->weight;
	*diff_at(d, cls, y->from, x->from) += v;
	*diff_at(d, cls, y->from, x->to + 1) -= v;
	*diff_at(d, cls, y->to + 1, x->from) -= v;
	*diff_at(d, cls, y->to + 1, x->to + 1) += v;
}

/* Writes s escaped for XML text, cut after max_chars characters with an
 * ellipsis. A byte that is not valid UTF-8, or a control character, becomes
 * '?': a path or symbol is not guaranteed to be valid UTF-8, and one bad byte
 * would make the whole document unreadable. */
static void xml_text(FILE *out, const char *s, size_t max_chars)
{
	size_t left = strlen(s), n;

	for (size_t chars = 0; left && chars < max_chars; chars++, s += n, left -= n) {
		unsigned char c = (unsigned char)*s;
		n = utf8_sequence_length(s, left);
		if (c == '<')
			fputs("&lt;", out);
		else if (c == '>')
			fputs("&gt;", out);
		else if (c == '&')
			fputs("&amp;", out);
		else if (c == '"')
			fputs("&quot;", out);
		else if (!n || c < 0x20 || c == 0x7f)
			fputc('?', out);
		else
			fwrite(s, 1, n, out);
		if (!n)
			n = 1;
	}
	if (left)
		fputs("…", out);
}

/* The characters of s as xml_text counts them. */
static size_t text_chars(const char *s)
{
	size_t left = strlen(s), chars = 0, n;

	for (; left; chars++, s += n, left -= n)
		if (!(n = utf8_sequence_length(s, left)))
			n = 1;
	return chars;
}

static void format_bytes(char *buf, size_t cap, double bytes)
{
	size_text(buf, cap, (uint64_t)llround(bytes), false);
}

static void format_count(char *buf, size_t cap, double v)
{
	if (v >= 1e6)
		snprintf(buf, cap, "%gM", v / 1e6);
	else if (v >= 1e3)
		snprintf(buf, cap, "%gk", v / 1e3);
	else
		snprintf(buf, cap, "%g", v);
}

/* A 1, 2 or 5 times a power of ten step that cuts [0, range] into about n parts. */
static double nice_step(double range, int n)
{
	double raw = range / n, p = pow(10, floor(log10(raw))), f = raw / p;
	return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p;
}

/* A call site in the legend: the functions it was called through, innermost
 * first, inlined ones included (an inline chain is a call chain too), by
 * their names alone; a frame without symbols by module+offset. At most the
 * first two and the outermost are kept, since the first frames are often a
 * shared wrapper (xmalloc, sqlite3Malloc) and only the outer ones tell the
 * sites apart. */
struct legend_chain {
	char names[3][512];
	unsigned count; /* names kept */
	bool elided;	/* functions left out between the second and the last */
};

static void chain_add(struct legend_chain *c, const char *name)
{
	/* A function inlined into a copy of itself, or a frame of it calling
	 * itself, says nothing new. */
	if (c->count && !strcmp(c->names[c->count - 1], name))
		return;
	if (c->count < 3) {
		snprintf(c->names[c->count++], sizeof(c->names[0]), "%s", name);
		return;
	}
	c->elided = true; /* the third so far was not the last */
	snprintf(c->names[2], sizeof(c->names[2]), "%s", name);
}

static void legend_chain(struct symbolizer *sym, const struct plan_image *im, uint32_t site,
			 uint32_t frames, struct legend_chain *c)
{
	c->count = 0;
	c->elided = false;
	for (uint32_t k = 0; k < frames; k++) {
		struct frame_symbol symbols[FRAME_SYMBOLS_MAX];
		uint32_t f = im->sites[site].first_frame + k;
		unsigned n = frame_symbols_get(im, f, sym, symbols, FRAME_SYMBOLS_MAX);
		unsigned named = 0;
		for (unsigned i = 0; i < n; i++)
			if (symbols[i].function) {
				chain_add(c, symbols[i].function);
				named++;
			}
		if (!named) {
			char name[512];
			frame_symbols_format(im, f, sym, name, sizeof(name));
			chain_add(c, name);
		}
	}
}

/* Writes the chain, its names cut so that it takes at most budget characters:
 * each gets an equal share, and what a short name leaves goes to the others. */
static void write_chain(FILE *out, const struct legend_chain *c, size_t budget)
{
	size_t arrows = (c->count - 1) * 3 + (c->elided ? 4 : 0); /* " ← ", "… ← " */
	size_t chars[3], left = budget > arrows ? budget - arrows : 0;
	bool whole[3] = {false, false, false};
	unsigned open = c->count;

	for (unsigned i = 0; i < c->count; i++)
		chars[i] = text_chars(c->names[i]);
	for (bool changed = true; changed && open;) {
		changed = false;
		for (unsigned i = 0; i < c->count; i++)
			if (!whole[i] && chars[i] <= left / open) {
				whole[i] = true;
				left -= chars[i];
				open--;
				changed = true;
			}
	}
	for (unsigned i = 0; i < c->count; i++) {
		if (i)
			fputs(c->elided && i == 2 ? " ← … ← " : " ← ", out);
		/* The ellipsis xml_text adds to a cut name takes a character of its share. */
		size_t share = open ? left / open : 0;
		xml_text(out, c->names[i], whole[i] ? chars[i] : share > 1 ? share - 1 : 1);
	}
}

static void emit_rect(FILE *out, int x, int y, int width, int height, int code)
{
	fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" class=\"k%d\"/>\n",
		PLOT_X + x, PLOT_Y + y, width, height, code);
}

/* Emits the grid as rectangles: runs of equal cells along a row, and a run that
 * repeats exactly in the next row down grows taller instead of starting anew. */
static void emit_cells(FILE *out, const uint8_t *code)
{
	int open_x1[GRID_W], open_y[GRID_W], open_h[GRID_W], open_row[GRID_W];
	uint8_t open_code[GRID_W];

	memset(open_code, 0, sizeof(open_code));
	for (int r = 0; r < GRID_H; r++) {
		/* Row r of the picture (from the top) is grid row GRID_H - 1 - r. */
		const uint8_t *row = &code[(size_t)(GRID_H - 1 - r) * GRID_W];
		for (int x = 0; x < GRID_W;) {
			int x1 = x + 1;
			while (x1 < GRID_W && row[x1] == row[x])
				x1++;
			if (row[x]) {
				if (open_code[x] == row[x] && open_x1[x] == x1 &&
				    open_row[x] == r - 1) {
					open_h[x]++;
					open_row[x] = r;
				} else {
					if (open_code[x])
						emit_rect(out, x, open_y[x], open_x1[x] - x,
							  open_h[x], open_code[x]);
					open_code[x] = row[x];
					open_x1[x] = x1;
					open_y[x] = r;
					open_h[x] = 1;
					open_row[x] = r;
				}
			}
			x = x1;
		}
		for (int x = 0; x < GRID_W; x++)
			if (open_code[x] && open_row[x] != r) {
				emit_rect(out, x, open_y[x], open_x1[x] - x, open_h[x],
					  open_code[x]);
				open_code[x] = 0;
			}
	}
	for (int x = 0; x < GRID_W; x++)
		if (open_code[x])
			emit_rect(out, x, open_y[x], open_x1[x] - x, open_h[x], open_code[x]);
}

static void emit_axes(FILE *out, double t_max, double y_top)
{
	char label[64];

	fprintf(out,
		"<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
		"stroke=\"#444\"/>\n",
		PLOT_X, PLOT_Y, GRID_W, GRID_H);
	double step = nice_step(t_max, 6);
	for (double t = 0; t <= t_max * 1.0001; t += step) {
		double x = PLOT_X + t / t_max * GRID_W;
		format_count(label, sizeof(label), t);
		fprintf(out,
			"<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"#444\"/>"
			"<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
			x, x, PLOT_Y + GRID_H, PLOT_Y + GRID_H + 5, x, PLOT_Y + GRID_H + 18, label);
	}
	fprintf(out,
		"<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">time (allocation and free "
		"events)</text>\n",
		PLOT_X + GRID_W / 2, PLOT_Y + GRID_H + 34);

	/* Offsets step in round numbers of the largest binary unit that fits. */
	double unit = 1;
	while (unit * 1024 <= y_top)
		unit *= 1024;
	step = nice_step(y_top / unit, 6) * unit;
	for (double b = 0; b <= y_top; b += step) {
		double y = PLOT_Y + GRID_H - b / y_top * GRID_H;
		format_bytes(label, sizeof(label), b);
		fprintf(out,
			"<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#444\"/>"
			"<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
			PLOT_X - 5, PLOT_X, y, y, PLOT_X - 8, y + 4, label);
	}
	fprintf(out,
		"<text transform=\"translate(%d %d) rotate(-90)\" text-anchor=\"middle\">"
		"offset in the arena</text>\n",
		16, PLOT_Y + GRID_H / 2);
}

/* A labelled horizontal line at `bytes`; the label sits above or below it so the
 * arena and lower-bound labels do not collide when the two are close. */
static void emit_level(FILE *out, double bytes, double y_top, const char *what, const char *style,
		       bool label_below)
{
	char size[32];
	double y = PLOT_Y + GRID_H - bytes / y_top * GRID_H;

	format_bytes(size, sizeof(size), bytes);
	fprintf(out, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" %s/>\n", PLOT_X,
		PLOT_X + GRID_W, y, y, style);
	fprintf(out, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" class=\"lv\">%s %s</text>\n",
		PLOT_X + GRID_W - 4, label_below ? y + 13 : y - 4, what, size);
}

/* Outlines each chunk of pool slots (the steady state's regions) from its start
 * to the end of the time axis, dashed. */
static void emit_pools(FILE *out, const struct plan_image *im, double t_max, double y_top)
{
	for (uint32_t k = 0; k < im->record.chunk_count; k++) {
		const struct plan_chunk *c = &im->chunks[k];
		double bytes = (double)im->pools[c->pool].slot_bytes * c->slot_count;
		double x0 = PLOT_X + c->t_start / t_max * GRID_W;
		double y0 = PLOT_Y + GRID_H - ((double)c->offset_bytes + bytes) / y_top * GRID_H;
		double h = bytes / y_top * GRID_H;
		if (x0 >= PLOT_X + GRID_W || y0 >= PLOT_Y + GRID_H)
			continue;
		fprintf(out,
			"<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
			"fill=\"none\" stroke=\"#222\" stroke-width=\"0.8\" "
			"stroke-dasharray=\"3 2\"/>\n",
			x0, y0 < PLOT_Y ? PLOT_Y : y0, PLOT_X + GRID_W - x0, h < 0.5 ? 0.5 : h);
	}
}

int plan_svg_write(FILE *out, const struct plan_image *im, struct symbolizer *sym)
{
	const struct plan_image_record *r = &im->record;
	struct site_summary *sums = NULL;
	uint64_t t_peak, peak_bytes;
	uint8_t *site_class = NULL, *code = NULL;
	double *diff = NULL;
	int err = -ENOMEM;

	if (plan_summary_sites(im, &sums, &t_peak, &peak_bytes) < 0)
		goto err_out;
	site_class = calloc(r->site_count ? r->site_count : 1, 1);
	code = calloc((size_t)GRID_W * GRID_H, 1);
	diff = calloc((size_t)CLASSES * (GRID_H + 1) * (GRID_W + 1), sizeof(*diff));
	if (!site_class || !code || !diff)
		goto err_out;
	unsigned top = r->site_count < TOP_SITES ? r->site_count : TOP_SITES;
	for (unsigned i = 0; i < top; i++)
		site_class[sums[i].site] = (uint8_t)(i + 1);

	/* The time axis ends at the last event; never-freed blocks run to it. */
	double t_max = 1;
	for (uint64_t i = 0; i < r->entry_count; i++) {
		const struct plan_entry *e = &im->entries[i];
		if (e->t_start + 1.0 > t_max)
			t_max = e->t_start + 1.0;
		if (e->t_end != PLAN_T_INFINITY && (double)e->t_end > t_max)
			t_max = (double)e->t_end;
	}
	for (uint32_t k = 0; k < r->chunk_count; k++)
		if (im->chunks[k].t_start + 1.0 > t_max)
			t_max = im->chunks[k].t_start + 1.0;
	double y_top =
	    (double)(r->arena_bytes > r->lower_bound_bytes ? r->arena_bytes : r->lower_bound_bytes);
	y_top = y_top > 0 ? y_top * 1.06 : 1;

	for (uint64_t i = 0; i < r->entry_count; i++) {
		const struct plan_entry *e = &im->entries[i];
		struct span xs[3], ys[3];
		/* An in-place realloc shares its block, whose lifetime already covers it. */
		if (e->in_place_of || !e->size_bytes)
			continue;
		double t_end = e->t_end == PLAN_T_INFINITY ? t_max : (double)e->t_end;
		int nx =
		    split_span(e->t_start / t_max * GRID_W, t_end / t_max * GRID_W, GRID_W, xs);
		int ny = split_span(
		    e->offset_bytes / y_top * GRID_H,
		    ((double)e->offset_bytes + (double)e->size_bytes) / y_top * GRID_H, GRID_H, ys);
		int cls = e->site < r->site_count ? site_class[e->site] : 0;
		for (int a = 0; a < nx; a++)
			for (int b = 0; b < ny; b++)
				add_rect(diff, cls, &xs[a], &ys[b]);
	}
	/* The pools' slots are held from their chunk's start on, used or not. */
	for (uint32_t k = 0; k < r->chunk_count; k++) {
		const struct plan_chunk *c = &im->chunks[k];
		const struct plan_pool *p = &im->pools[c->pool];
		struct span xs[3], ys[3];
		double bytes = (double)p->slot_bytes * c->slot_count;
		int nx = split_span(c->t_start / t_max * GRID_W, GRID_W, GRID_W, xs);
		int ny = split_span(c->offset_bytes / y_top * GRID_H,
				    ((double)c->offset_bytes + bytes) / y_top * GRID_H, GRID_H, ys);
		int cls = p->site < r->site_count ? site_class[p->site] : 0;
		for (int a = 0; a < nx; a++)
			for (int b = 0; b < ny; b++)
				add_rect(diff, cls, &xs[a], &ys[b]);
	}

	/* Integrate the difference arrays, then give each cell its dominant class and a
	 * shade for how much of it is covered (a quarter, half, three quarters, full). */
	for (int c = 0; c < CLASSES; c++)
		for (int y = 0; y <= GRID_H; y++)
			for (int x = 0; x <= GRID_W; x++) {
				double v = *diff_at(diff, c, y, x);
				if (x)
					v += *diff_at(diff, c, y, x - 1);
				if (y)
					v += *diff_at(diff, c, y - 1, x);
				if (x && y)
					v -= *diff_at(diff, c, y - 1, x - 1);
				*diff_at(diff, c, y, x) = v;
			}
	for (int y = 0; y < GRID_H; y++)
		for (int x = 0; x < GRID_W; x++) {
			double total = 0, best = 0;
			int best_class = 0;
			for (int c = 0; c < CLASSES; c++) {
				double v = *diff_at(diff, c, y, x);
				total += v;
				if (v > best) {
					best = v;
					best_class = c;
				}
			}
			if (total < 1e-9)
				continue;
			int shade = (int)ceil(total * SHADES - 1e-9);
			shade = shade < 1 ? 1 : shade > SHADES ? SHADES : shade;
			code[(size_t)y * GRID_W + x] =
			    (uint8_t)(1 + best_class * SHADES + shade - 1);
		}

	/* The sites, the others and the pools' note only if there are any, and
	 * the note on the cells. */
	const bool others = r->site_count > top, pools = r->chunk_count > 0;
	unsigned legend_lines = top + others + 1 + pools;
	int width = PLOT_X + GRID_W + 30;
	int height = PLOT_Y + GRID_H + 56 + (int)legend_lines * LEGEND_LINE + 10;
	char a[32], b[32];

	fprintf(out,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"11\">\n",
		width, height, width, height);
	fprintf(out, "<style>.lv{font-size:11px;font-weight:bold}");
	for (int c = 0; c < CLASSES; c++)
		for (int s = 1; s <= SHADES; s++)
			fprintf(out, ".k%d{fill:%s;fill-opacity:%.2f}", 1 + c * SHADES + s - 1,
				class_colour[c], (double)s / SHADES);
	fprintf(out, "</style>\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");

	fprintf(out, "<text x=\"%d\" y=\"20\" font-size=\"14\" font-weight=\"bold\">plan of ",
		PLOT_X);
	xml_text(out, im->strings + r->exe_path_offset, TITLE_CHARS);
	format_bytes(a, sizeof(a), (double)r->arena_bytes);
	format_bytes(b, sizeof(b), (double)r->lower_bound_bytes);
	fprintf(out,
		" (pid %u)</text>\n<text x=\"%d\" y=\"38\" fill=\"#444\">%" PRIu64
		" exact block%s, %u pool%s, from %u call site%s; arena %s, lower bound %s "
		"(%.3f×)</text>\n",
		r->pid, PLOT_X, r->entry_count, r->entry_count == 1 ? "" : "s", r->pool_count,
		r->pool_count == 1 ? "" : "s", r->site_count, r->site_count == 1 ? "" : "s", a, b,
		r->lower_bound_bytes ? (double)r->arena_bytes / (double)r->lower_bound_bytes : 1.0);

	emit_cells(out, code);
	emit_axes(out, t_max, y_top);
	emit_pools(out, im, t_max, y_top);
	emit_level(out, (double)r->arena_bytes, y_top, "arena",
		   "stroke=\"#000\" stroke-width=\"1.5\"", false);
	emit_level(out, (double)r->lower_bound_bytes, y_top, "lower bound",
		   "stroke=\"#d62728\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"", true);

	/* Legend: each coloured site by its first frame, its caller and its outermost
	 * recorded frame, since the first frames are often a shared wrapper (xmalloc,
	 * sqlite3Malloc) and only the outer frames tell the sites apart. */
	int ly = PLOT_Y + GRID_H + 56;
	for (unsigned i = 0; i < top + others; i++, ly += LEGEND_LINE) {
		int cls = i < top ? (int)i + 1 : 0;
		fprintf(out,
			"<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>"
			"<text x=\"%d\" y=\"%d\" font-size=\"10\">",
			PLOT_X, ly - 10, class_colour[cls], PLOT_X + 18, ly);
		if (i == top) {
			fprintf(out, "other call sites (%u)</text>\n", r->site_count - top);
			continue;
		}
		const struct site_summary *s = &sums[i];
		const struct plan_site *site = &im->sites[s->site];
		char prefix[96];
		format_bytes(a, sizeof(a), (double)s->bytes_at_peak);
		snprintf(prefix, sizeof(prefix), "%s at peak, %" PRIu64 " alloc%s: ", a,
			 s->allocations, s->allocations == 1 ? "" : "s");
		fputs(prefix, out);
		uint32_t shown = frame_symbols_shown(im, s->site, sym);
		if (!shown) {
			fputs(site->frame_count ? "(start-up code)" : "(no frames)", out);
		} else {
			struct legend_chain chain;
			legend_chain(sym, im, s->site, shown, &chain);
			write_chain(out, &chain, LEGEND_CHARS - strlen(prefix));
		}
		fputs("</text>\n", out);
	}
	fprintf(out,
		"<text x=\"%d\" y=\"%d\" fill=\"#444\">Each cell shows the call site "
		"covering most of it; its shade, how full it is (a quarter to all).</text>\n",
		PLOT_X, ly);
	if (pools)
		fprintf(out,
			"<text x=\"%d\" y=\"%d\" fill=\"#444\">Dashed: pool slots of a steady "
			"state, held from then on.</text>\n",
			PLOT_X, ly + LEGEND_LINE);
	fprintf(out, "</svg>\n");
	err = ferror(out) ? -EIO : 0;

err_out:
	free(diff);
	free(code);
	free(site_class);
	free(sums);
	return err;
}

int plan_svg_show(FILE *out, const char *name, const void *buf, const uint32_t *images,
		  uint32_t count, struct symbolizer *sym)
{
	struct plan_image im;
	int err;

	if (!count) {
		fprintf(stderr, "memplan: %s: the plan holds no process image\n", name);
		return 1;
	}
	/* The image with the biggest arena: with a shell script or a pyenv shim
	 * recorded, the first image is often a small launcher. */
	uint32_t pick = images[0];
	for (uint32_t i = 0; i < count; i++) {
		plan_file_image(buf, images[i], &im);
		uint64_t arena = im.record.arena_bytes;
		plan_file_image(buf, pick, &im);
		if (arena > im.record.arena_bytes)
			pick = images[i];
	}
	plan_file_image(buf, pick, &im);
	struct plan_entry *entries;
	err = plan_image_entries(&im, &entries);
	if (!err) {
		im.entries = entries;
		err = plan_svg_write(out, &im, sym);
		free(entries);
	}
	/* A write that failed (-EIO) may be one to a reader gone. */
	const int end = stdout_end(out);
	if (end == STDOUT_END_READER_GONE)
		return end;
	if (end && !err)
		err = -EIO;
	if (err) {
		fprintf(stderr, "memplan: %s: %s\n", name,
			err == -ENOMEM ? "out of memory" : "cannot write the picture");
		return 1;
	}
	return 0;
}
