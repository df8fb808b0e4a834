/* Where libmemplan.so is, for the CLI to preload it: next to the build tree's CLI
 * when run from a build directory, else the installed library. */
#pragma once

#include <stddef.h>

/* Writes the absolute path of libmemplan.so into out. MEMPLAN_PRELOAD overrides.
 * Returns 0, or -ENOENT with out holding the last place tried. */
int preload_path_find(char *out, size_t cap);
