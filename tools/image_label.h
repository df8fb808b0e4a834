/* How reports name a process image in one line: by its command, marked where
 * the recording cut its arguments, and a child forked without exec marked
 * " (forked)", as it runs its parent's command and would read as its parent
 * (show's table and details, diff's headings, check's lines). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "plan_file.h"

/* Appends to out (cap bytes, *at of them written, escaped as text_safe.h does)
 * the name of a process image: the file name of argv0, what the user ran, and
 * the executable's file name exe after it if that is another ("redis-server
 * (redis-check-rdb)" for a link to redis-check-rdb); exe alone for an argv0
 * NULL or "". Returns false if out was too short for it. */
bool image_label_name(char *out, size_t cap, size_t *at, const char *exe, const char *argv0);

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
