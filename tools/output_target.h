/* Where memplan writes an output file the user names (-o): through a symbolic
 * link, to the file it points to, as a shell's > and cp write. A plan is
 * replaced by renaming a new file over the old one (atomic_file.h), which over
 * the link itself would replace the link and leave the file it names as it
 * was. */
#pragma once

#include <stddef.h>

/* Writes into out the file a write to path lands in: path itself, or, if it is
 * a symbolic link, the file at the end of its chain of links (which need not
 * exist yet), a relative link read from its own directory. Returns 0, or
 * -ELOOP (more than 40 links), -ENAMETOOLONG, or a negative errno of readlink. */
int output_target(const char *path, char *out, size_t cap);

/* The line for an -o that names a file that is not a plan, which a plan must
 * never take the place of (plan_file_may_replace): `-o app` typed for
 * `-o app.plan`. With the path as the user gave it. */
#define PLAN_OUTPUT_NOT_PLAN                                                                       \
	"memplan: %s: exists and is not a plan; memplan writes a plan only over a plan, an "       \
	"empty file or no file (remove it first, or choose another -o)\n"
