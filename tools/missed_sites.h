/* Naming the call sites that a replay's statistics say went to libc
 * (stats_lines.h, missed_sites), from the plan they were replayed from: the
 * statistics know a site by its key only, the plan knows its frames and their
 * symbols. For the replay summary and memplan check --min-hit-rate. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "plan_file.h"
#include "symbolize.h"

/* Finds the site whose key is key in the validated plan buf: in an image of
 * the executable exe (a path, as statistics give it, compared by file name;
 * NULL for any) if one has it, else in any image. Returns true with *image
 * and *site set. */
bool missed_site_find(const void *buf, uint64_t key, const char *exe, struct plan_image *image,
		      uint32_t *site);

/* Writes the name of site key into out (at most cap bytes, NUL-terminated):
 * its chain of functions cut to depth (0: the depth it was recorded with), as
 * site_identity_name writes it
 * ("make_buf <- session_open (prog)"), or "site KEY" (hex, as in the
 * statistics) if buf is NULL, has no such site, or memory runs out. sym may
 * be NULL. */
void missed_site_name(const void *buf, uint64_t key, const char *exe, uint32_t depth,
		      struct symbolizer *sym, char *out, size_t cap);
