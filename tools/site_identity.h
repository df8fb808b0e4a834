/* A call site's identity across rebuilds, for comparing plans (docs/ci.md).
 *
 * A site's key in a plan (build-id and offset of each frame) changes with every
 * rebuild. Its identity instead is the chain of the functions it was called
 * through, innermost first, inline frames included, each with its module's file
 * name: no build-id, no offset, no line. The chain stops above libc's start-up
 * frames (below main), and is cut to the first `depth` functions: a site of
 * depth d has d frames, each one function or more (those inlined into it), so
 * its first d functions are known however the compiler inlined, and a build
 * that inlines more (-O2 against -O1) gives the same chain. Compiler clone
 * suffixes (foo.constprop.0, foo.part.0, foo.cold, "[clone .isra.0]") are
 * dropped. A frame nothing is known of is named module+0xoffset (which a
 * rebuild changes; the same binaries still agree). The functions' lines are
 * kept apart, to tell apart sites of one chain. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "plan_file.h"
#include "symbolize.h"

/* One function of a site's chain. Strings point into the image or the
 * symbolizer that gave them. */
struct site_function {
	const char *module;   /* file name */
	const char *function; /* NULL: nothing known of the frame (see offset) */
	const char *file;     /* NULL if unknown */
	uint32_t line;	      /* 0 if unknown */
	bool inlined;
	uint64_t offset; /* the frame's, for a frame nothing is known of */
};

struct site_identity {
	struct site_function *functions;
	uint32_t count;
	char *chain; /* the functions, normalised, as one string: the identity */
};

/* Fills *id with the identity of site of image, cut to depth functions, with
 * symbols stored in the plan or else found by sym (may be NULL). Returns 0 or
 * -ENOMEM. May allocate; free with site_identity_free. */
int site_identity_build(const struct plan_image *image, uint32_t site, uint32_t depth,
			struct symbolizer *sym, struct site_identity *id);

void site_identity_free(struct site_identity *id);

/* Orders identities of one chain by their lines, function by function. */
int site_identity_compare_lines(const struct site_identity *a, const struct site_identity *b);

/* Writes the chain for people into out (at most cap bytes, NUL-terminated):
 * the functions innermost first, each run of one module followed by its name,
 * "make_buf <- session_open <- main (prog)"; for markdown, each function a code
 * span and the arrows "←" ("`make_buf` ← `session_open` ← `main` (prog)"),
 * escaped for a table cell (markdown_text.h) so that every name shows as it is.
 * A chain that does not fit ends with "..." where it was cut. */
void site_identity_name(const struct site_identity *id, bool markdown, char *out, size_t cap);
