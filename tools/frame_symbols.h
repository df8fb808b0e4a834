/* What the reports say of a plan's frames: the symbols `memplan record` stored
 * in the plan (so a plan stays readable after its binaries are rebuilt or
 * gone), or, for a plan without them, those a symbolizer finds now. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "plan_file.h"
#include "symbolize.h"

/* Fills out (at most cap) with the symbols of frame f of image, innermost
 * first: those stored in the plan; for an image without stored symbols, those
 * sym finds (none if sym is NULL). Strings point into the image or into sym.
 * Returns how many (0: nothing is known of the frame). May allocate (sym). */
unsigned frame_symbols_get(const struct plan_image *image, uint32_t f, struct symbolizer *sym,
			   struct frame_symbol *out, unsigned cap);

/* Whether function is one of libc's start-up functions below main (_start,
 * __libc_start_main, __libc_start_call_main), which reports leave out. */
bool frame_symbols_is_startup(const char *function);

/* How many of site's frames a report shows: those above libc's start-up code
 * at the bottom of the stack, which is main's caller, or the first frame
 * named as start-up code and an unnamed libc frame just above it (libc's
 * static __libc_start_call_main, when its debug information is not
 * installed). May allocate (sym). */
uint32_t frame_symbols_shown(const struct plan_image *image, uint32_t site, struct symbolizer *sym);

/* The file name of module m of image (what follows the last '/' of its path). */
const char *frame_symbols_module_name(const struct plan_image *image, uint32_t m);

/* Writes frame f of image into out (always NUL-terminated): its symbols
 * innermost first, "inner (file:line) inlined in outer (file:line) in module",
 * or "module+0xoffset" when nothing is known. A frame that does not fit in
 * cap bytes ends with "..." where it was cut. May allocate (sym). */
void frame_symbols_format(const struct plan_image *image, uint32_t f, struct symbolizer *sym,
			  char *out, size_t cap);
