/* The table of loaded modules (executable, shared objects, vdso), used to turn a
 * return address into (module identity, offset), which is stable under ASLR.
 * A module is identified by its GNU build-id, or by its path when it has none.
 * Built from dl_iterate_phdr and rebuilt only when the loader's add/remove
 * counters say that dlopen or dlclose changed the set. Not thread-safe: the
 * call-site code serialises access. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "plan_file.h"

struct module {
	uintptr_t start; /* lowest mapped address of its PT_LOAD segments */
	uintptr_t end;
	uintptr_t base; /* load bias: offsets are ip - base */
	uint64_t key;
	uint8_t build_id_bytes;
	uint8_t build_id[PLAN_BUILD_ID_MAX];
	char *path; /* libc-allocated copy */
};

struct module_table {
	struct module *modules; /* sorted by start */
	size_t count;
	unsigned long long adds, subs; /* the loader's counters at the last build */
	uint64_t main_key;	       /* key of the main program */
};

/* Rebuilds the table if the loader's counters moved (or it was never built).
 * Returns 0 or -ENOMEM. Call with the guard set: it allocates through libc. */
int module_table_refresh(struct module_table *table);

/* How many modules the loader has unloaded so far (dl_iterate_phdr's
 * dlpi_subs). Does not allocate. */
unsigned long long module_unloads(void);

/* The module that maps ip, or NULL. Does not allocate. */
const struct module *module_table_find(const struct module_table *table, uintptr_t ip);

/* The identity key of the main executable (its build-id, or its path), or 0.
 * Does not allocate beyond the table itself. */
uint64_t module_table_main_key(struct module_table *table);
