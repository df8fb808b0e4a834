/* Whether the process runs under a valgrind tool that replaces the allocator.
 *
 * memcheck, helgrind, drd, massif and dhat put malloc, free, realloc and
 * calloc of every library that defines them (memplan's too) on their own
 * allocator, and leave the rest (memalign, aligned_alloc, posix_memalign...)
 * where they are: blocks memplan served through those were then freed to the
 * tool, which called each free invalid, and a program checked with
 * --error-exitcode failed. Under such a tool memplan stays off; under those
 * that leave the allocator alone (callgrind, cachegrind, none) it runs. */
#pragma once

#include <stdbool.h>

/* Whether ld_preload (LD_PRELOAD's value, or NULL) holds the preload library of
 * a valgrind tool other than its core: valgrind sets it for the program it
 * runs, and removes it for the programs that one starts unless it follows them
 * (--trace-children), so it is the process's own. */
bool valgrind_tool_replaces_allocator(const char *ld_preload);
