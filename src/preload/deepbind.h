/* Libraries opened with RTLD_DEEPBIND, bound to memplan's allocation functions.
 *
 * RTLD_DEEPBIND puts a library's own dependencies ahead of the global scope in
 * its symbol lookups, so its calls of malloc and free go to libc, past every
 * preloaded allocator. A block that the program allocated from the arena and
 * such a library frees, reallocs or measures reaches glibc, which aborts:
 * Debian's PHP opens its extensions so, and jemalloc, mimalloc and tcmalloc all
 * crash it when preloaded.
 *
 * memplan's dlopen passes every call straight to glibc's (by a jump, so that
 * glibc sees the program's return address: it searches the caller's RUNPATH
 * and namespace) unless a mode is running and the call asks for
 * RTLD_DEEPBIND. (In replay, the first call opens memplan's record module
 * before it goes on: record_module.h.) Such a call is made in the caller's
 * namespace, a bare name looked for first along the caller's own search
 * path; then, in every object the call loaded, the references to the
 * allocation functions that now point at glibc's are pointed at those the
 * global scope gives (memplan's), as without RTLD_DEEPBIND. Every other
 * symbol keeps its deep binding.
 *
 * x86-64 only (the relocation types); elsewhere dlopen is not wrapped. */
#pragma once

#include <stdbool.h>

/* Set once a mode (record or replay) has started in this process: from then
 * on RTLD_DEEPBIND opens are rebound. */
extern bool deepbind_rebinding;

/* glibc's dlopen, which memplan's jumps to (set by real_libc). */
extern void *(*deepbind_real_dlopen)(const char *file, int mode);

/* The paths of memplan's dlopen (deepbind_entry.S jumps to them): an
 * RTLD_DEEPBIND open while rebinding, and any open before glibc's dlopen was
 * resolved. */
void *deepbind_dlopen(const char *file, int mode);
void *deepbind_dlopen_unresolved(const char *file, int mode);

/* Called with the guard set, before the program runs, once a mode has
 * started: turns the rebinding on (the functions it rebinds are looked up at
 * the first RTLD_DEEPBIND open). */
void deepbind_start(void);
