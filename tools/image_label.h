/* How reports name a process image in one line: by its command, and a child
 * forked without exec marked " (forked)", as it runs its parent's command and
 * would read as its parent (show's table, diff's headings, check's lines). */
#pragma once

#include <stddef.h>

#include "plan_file.h"

/* Writes a command of image into out (cap bytes, NUL-terminated), cut with
 * "..." where it does not fit: image_match_label, or show's table's. */
typedef void image_command_fn(const struct plan_image *image, char *out, size_t cap);

/* What the label of image ends with: " (forked)" for a child forked without
 * exec, else "". */
const char *image_label_mark(const struct plan_image *image);

/* Writes the label of image into out (cap bytes, NUL-terminated): its command
 * as command writes it, cut to leave room for the mark of a forked child. */
void image_label(const struct plan_image *image, image_command_fn *command, char *out,
		 size_t cap);
