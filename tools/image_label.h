/* How reports name a process image in one line: by its command, marked where
 * the recording cut its arguments, and a child forked without exec marked
 * " (forked)", as it runs its parent's command and would read as its parent
 * (show's table and details, diff's headings, check's lines). */
#pragma once

#include <stddef.h>

#include "plan_file.h"

/* Writes a command of image into out (cap bytes, NUL-terminated), cut with
 * "..." where it does not fit: image_match_label, or show's table's. */
typedef void image_command_fn(const struct plan_image *image, char *out, size_t cap);

/* Writes the command of image into out (cap bytes, NUL-terminated) as command
 * writes it, ending in "..." where the recording cut the arguments (it keeps
 * their first 4 KiB): a long command is then no shorter one. */
void image_label_command(const struct plan_image *image, image_command_fn *command, char *out,
			 size_t cap);

/* What the label of image ends with: " (forked)" for a child forked without
 * exec, else "". */
const char *image_label_mark(const struct plan_image *image);

/* Writes the label of image into out (cap bytes, NUL-terminated): its command
 * as image_label_command writes it, cut to leave room for its mark. */
void image_label(const struct plan_image *image, image_command_fn *command, char *out, size_t cap);
