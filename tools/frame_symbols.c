/* A plan's frames as reports name them, see frame_symbols.h. */
#include "frame_symbols.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "text_safe.h"

static const char *stored_string(const struct plan_image *im, uint32_t offset)
{
	return offset == PLAN_NO_STRING ? NULL : im->strings + offset;
}

unsigned frame_symbols_get(const struct plan_image *im, uint32_t f, struct symbolizer *sym,
			   struct frame_symbol *out, unsigned cap)
{
	unsigned count = 0;

	if (im->record.symbol_count) {
		for (uint32_t k = im->frame_symbols[f]; k < im->frame_symbols[f + 1] && count < cap;
		     k++) {
			const struct plan_symbol *y = &im->symbols[k];
			out[count++] = (struct frame_symbol){
			    .function = stored_string(im, y->function),
			    .file = stored_string(im, y->file),
			    .line = y->line,
			    .inlined = y->flags & PLAN_SYMBOL_INLINED,
			};
		}
		return count;
	}
	if (!sym)
		return 0;
	const struct plan_frame *frame = &im->frames[f];
	const struct plan_module *m = &im->modules[frame->module];
	const struct frame_symbol *found;
	count = symbolizer_lookup(sym, plan_image_module_path(im, frame->module), m->build_id,
				  m->build_id_bytes, frame->offset, &found);
	if (count > cap)
		count = cap;
	if (count) /* found is NULL for none */
		memcpy(out, found, count * sizeof(*out));
	return count;
}

bool frame_symbols_is_startup(const char *function)
{
	static const char *const startup[] = {
	    "_start", "__libc_start_main", "__libc_start_call_main",
	    "__libc_start_main_impl", /* __libc_start_main's name in glibc's debug information */
	};

	for (size_t i = 0; function && i < sizeof(startup) / sizeof(startup[0]); i++)
		if (!strcmp(function, startup[i]))
			return true;
	return false;
}

/* The function of frame f itself (the outermost of its inline chain), or NULL
 * if no symbol names it. */
static const char *frame_function(const struct plan_image *im, uint32_t f, struct symbolizer *sym)
{
	struct frame_symbol symbols[FRAME_SYMBOLS_MAX];
	unsigned n = frame_symbols_get(im, f, sym, symbols, FRAME_SYMBOLS_MAX);

	return n ? symbols[n - 1].function : NULL;
}

static bool in_libc(const struct plan_image *im, uint32_t f)
{
	return !strncmp(frame_symbols_module_name(im, im->frames[f].module), "libc.so", 7);
}

uint32_t frame_symbols_shown(const struct plan_image *im, uint32_t site, struct symbolizer *sym)
{
	const struct plan_site *s = &im->sites[site];
	const char *callee = NULL; /* frame f - 1's function */

	/* Everything from the first start-up frame down: below
	 * __libc_start_call_main may be a _start that no symbol names. */
	for (uint32_t f = 0; f < s->frame_count; f++) {
		const char *function = frame_function(im, s->first_frame + f, sym);
		/* main's caller is libc's start-up code. */
		if (f && callee && !strcmp(callee, "main"))
			return f;
		if (function && frame_symbols_is_startup(function)) {
			/* __libc_start_call_main is a static function: without libc's
			 * debug information no symbol names it, above the exported
			 * __libc_start_main. */
			if (f && !callee && in_libc(im, s->first_frame + f - 1))
				return f - 1;
			return f;
		}
		callee = function;
	}
	return s->frame_count;
}

const char *frame_symbols_module_name(const struct plan_image *im, uint32_t m)
{
	const char *path = plan_image_module_path(im, m), *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

void frame_symbols_format(const struct plan_image *im, uint32_t f, struct symbolizer *sym,
			  char *out, size_t cap)
{
	struct frame_symbol symbols[FRAME_SYMBOLS_MAX];
	const struct plan_frame *frame = &im->frames[f];
	const char *module = frame_symbols_module_name(im, frame->module);
	unsigned n = frame_symbols_get(im, f, sym, symbols, FRAME_SYMBOLS_MAX);
	size_t at = 0;

	out[0] = '\0';
	for (unsigned k = 0; k < n && at < cap; k++) {
		const struct frame_symbol *y = &symbols[k];
		int w = snprintf(out + at, cap - at, "%s%s", k ? " inlined in " : "",
				 y->function ? y->function : "??");
		if (w > 0 && (size_t)w < cap - at && y->file)
			w += snprintf(out + at + w, cap - at - (size_t)w, " (%s:%" PRIu32 ")",
				      y->file, y->line);
		if (w < 0)
			break;
		at += (size_t)w;
	}
	int w = 0;
	if (at < cap && n)
		w = snprintf(out + at, cap - at, " in %s", module);
	else if (at < cap)
		w = snprintf(out, cap, "%s+0x%" PRIx64, module, frame->offset);
	/* A name cut short would read as a whole one: it says it was cut. */
	if (w >= 0 && at + (size_t)w >= cap)
		text_safe_mark_cut(out, strlen(out));
}
