/* Call-site identities across rebuilds, see site_identity.h. */
#define _GNU_SOURCE
#include "site_identity.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame_symbols.h"
#include "markdown_text.h"
#include "text_safe.h"

/* The length of name without a compiler clone suffix: C++ names demangle
 * with " [clone .constprop.0]", C names carry ".constprop.0", ".part.0",
 * ".cold" and the like, and a C identifier has no '.'. */
static size_t unsuffixed_length(const char *name)
{
	const char *clone = strstr(name, " [clone ");
	size_t len = clone ? (size_t)(clone - name) : strlen(name);
	const char *dot = memchr(name, '.', len);

	if (dot && !memchr(name, '(', len))
		len = (size_t)(dot - name);
	return len;
}

/* Appends to a growing string; returns false on ENOMEM. */
static bool append(char **s, size_t *len, size_t *cap, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(*s ? *s + *len : NULL, *s ? *cap - *len : 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return false;
	if (!*s || *len + (size_t)n + 1 > *cap) {
		size_t cap2 = *cap ? *cap : 256;
		while (cap2 < *len + (size_t)n + 1)
			cap2 *= 2;
		char *grown = realloc(*s, cap2);
		if (!grown)
			return false;
		*s = grown;
		*cap = cap2;
		va_start(ap, fmt);
		vsnprintf(*s + *len, *cap - *len, fmt, ap);
		va_end(ap);
	}
	*len += (size_t)n;
	return true;
}

int site_identity_build(const struct plan_image *im, uint32_t site, uint32_t depth,
			struct symbolizer *sym, struct site_identity *id)
{
	const struct plan_site *s = &im->sites[site];
	uint32_t frames = frame_symbols_shown(im, site, sym);
	size_t len = 0, cap = 0;

	memset(id, 0, sizeof(*id));
	id->functions = calloc((size_t)depth + 1, sizeof(*id->functions));
	if (!id->functions)
		return -ENOMEM;
	for (uint32_t f = 0; f < frames && id->count < depth; f++) {
		const struct plan_frame *frame = &im->frames[s->first_frame + f];
		struct frame_symbol symbols[FRAME_SYMBOLS_MAX];
		unsigned n =
		    frame_symbols_get(im, s->first_frame + f, sym, symbols, FRAME_SYMBOLS_MAX);
		struct site_function fn = {
		    .module = frame_symbols_module_name(im, frame->module),
		    .offset = frame->offset,
		};
		if (!n)
			id->functions[id->count++] = fn;
		for (unsigned k = 0; k < n && id->count < depth; k++) {
			fn.function = symbols[k].function;
			fn.file = symbols[k].file;
			fn.line = symbols[k].line;
			fn.inlined = symbols[k].inlined;
			id->functions[id->count++] = fn;
		}
	}
	for (uint32_t k = 0; k < id->count; k++) {
		const struct site_function *fn = &id->functions[k];
		bool ok = fn->function
			      ? append(&id->chain, &len, &cap, "%s\x1f%.*s\x1e", fn->module,
				       (int)unsuffixed_length(fn->function), fn->function)
			      : append(&id->chain, &len, &cap, "%s\x1f+0x%" PRIx64 "\x1e",
				       fn->module, fn->offset);
		if (!ok) {
			site_identity_free(id);
			return -ENOMEM;
		}
	}
	if (!id->chain && !(id->chain = strdup(""))) {
		site_identity_free(id);
		return -ENOMEM;
	}
	return 0;
}

void site_identity_free(struct site_identity *id)
{
	free(id->functions);
	free(id->chain);
	memset(id, 0, sizeof(*id));
}

int site_identity_compare_lines(const struct site_identity *a, const struct site_identity *b)
{
	for (uint32_t k = 0; k < a->count && k < b->count; k++)
		if (a->functions[k].line != b->functions[k].line)
			return a->functions[k].line < b->functions[k].line ? -1 : 1;
	return (a->count > b->count) - (a->count < b->count);
}

/* Appends text to out at *at, as much as fits in cap (out stays terminated),
 * its control characters escaped (text_safe.h); for markdown, escaped as
 * text in a table cell (markdown_text.h). False if it did not all fit. */
static bool put(char *out, size_t cap, size_t *at, const char *text, size_t len, bool markdown)
{
	if (markdown)
		return markdown_text_append(out, cap, at, text, len);
	return text_safe_append(out, cap, at, text, len);
}

void site_identity_name(const struct site_identity *id, bool markdown, char *out, size_t cap)
{
	const char *arrow = markdown ? " ← " : " <- ";
	size_t at = 0;
	char offset[32];
	bool fits = true;

	if (!cap)
		return;
	out[0] = '\0';
	if (!id->count)
		fits &= put(out, cap, &at, "(no frames)", 11, false);
	for (uint32_t k = 0; k < id->count && fits; k++) {
		const struct site_function *fn = &id->functions[k];
		const char *name = fn->function;
		if (!name) {
			snprintf(offset, sizeof(offset), "+0x%" PRIx64, fn->offset);
			name = offset;
		}
		if (k)
			fits &= put(out, cap, &at, arrow, strlen(arrow), false);
		if (markdown) {
			/* One code span, whatever its name holds (a C++ operator|). */
			char code[1024];
			snprintf(code, sizeof(code), "%s%s", fn->function ? "" : fn->module, name);
			fits &= markdown_code_append(out, cap, &at, code, strlen(code), true);
		} else {
			if (!fn->function)
				fits &= put(out, cap, &at, fn->module, strlen(fn->module), false);
			fits &= put(out, cap, &at, name, strlen(name), false);
		}
		if (k + 1 == id->count || strcmp(fn->module, id->functions[k + 1].module)) {
			fits &= put(out, cap, &at, " (", 2, false);
			fits &= put(out, cap, &at, fn->module, strlen(fn->module), markdown);
			fits &= put(out, cap, &at, ")", 1, false);
		}
	}
	if (!fits)
		text_safe_mark_cut(out, at);
}
