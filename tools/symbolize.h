/* Turning a plan frame (module, offset) back into "function+0xoff (file:line)"
 * with elfutils' libdw, after the fact and on any machine that has the binaries.
 * A module whose build-id on disk differs from the recorded one is not trusted. */
#pragma once

#include <stddef.h>

#include "plan_file.h"

struct symbolizer;

/* Returns a new symbolizer, or NULL on ENOMEM. May allocate. */
struct symbolizer *symbolizer_new(void);
void symbolizer_free(struct symbolizer *s);

/* Writes a readable name for frame f of image into out (always NUL-terminated):
 * "func+0x1a (file.c:42) in libfoo.so", or "libfoo.so+0x1234" when no symbol is
 * known. May allocate. Not thread-safe. */
void symbolizer_frame(struct symbolizer *s, const struct plan_image *image,
		      const struct plan_frame *f, char *out, size_t cap);
