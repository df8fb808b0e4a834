/* Pairing the process images of two plans, for comparing them (memplan diff and
 * check). An image is known by its executable's file name (not its build-id,
 * which a rebuild changes, nor its directory) and its arguments, argv[0] by its
 * file name, with the names of temporary files seen through (temp_names.h), so
 * that gcc's cc1 and as images of two recordings of one `gcc -c` match. A
 * forked child also needs the same fork ordinal. Among images alike so, the
 * same run pairs first (the hash of its whole argv, and the same path or
 * argv[0]). Images that match nothing so are paired, as replay pairs them,
 * with an image of the same executable of the nearest arguments
 * (args_distance.h: the fewest apart as a multiset, then by position), the
 * likest of equals (the same path or argv[0], then the likest differing
 * arguments). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "plan_file.h"

struct image_pair {
	int32_t base, head; /* image indices; -1: none (an image gone, or new) */
	bool args_differ;   /* paired by executable alone: the arguments differ */
};

/* Pairs the images of two validated plan buffers into *pairs (malloc'ed,
 * *count of them): first each head image in order, paired or new, then each
 * base image left, gone. Returns 0 or -ENOMEM. May allocate. */
int image_match(const void *base, const void *head, struct image_pair **pairs, size_t *count);

/* The argument after prev of image (the first for NULL), or NULL after the
 * last: image arguments are NUL-separated in its string table. */
const char *image_match_next_arg(const struct plan_image *image, const char *prev);

/* The executable's file name of image. */
const char *image_match_exe_name(const struct plan_image *image);

/* Writes image's arguments, space-separated, into out (at most cap bytes,
 * NUL-terminated; a longer list is cut short with "..."), to name it to
 * people. */
void image_match_label(const struct plan_image *image, char *out, size_t cap);

/* Writes arg into out (at most cap bytes, NUL-terminated) with the names of
 * temporary files normalised (temp_names.h, $TMPDIR from the environment). */
void image_match_normalize(const char *arg, char *out, size_t cap);
