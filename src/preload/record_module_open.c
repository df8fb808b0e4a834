/* Finding and opening libmemplan-record.so, see record_module.h. */
#define _GNU_SOURCE
#include "record_module.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdatomic.h>
#include <string.h>

#include "guard.h"

/* Read by dlopen's wrapper (deepbind_entry.S), a byte. */
__attribute__((visibility("hidden"), used)) _Atomic bool record_module_pending;

const struct record_module *record_module_open(bool to_record, const char **why)
{
	char path[PATH_MAX];
	Dl_info self;

	/* Beside this library, wherever it was loaded from: not by the search
	 * path, which could find another version's module. */
	if (!dladdr((void *)record_module_open, &self) || !self.dli_fname) {
		*why = "cannot tell where libmemplan.so was loaded from";
		return NULL;
	}
	const char *slash = strrchr(self.dli_fname, '/');
	const size_t dir = slash ? (size_t)(slash - self.dli_fname) + 1 : 0;
	if (dir + sizeof(RECORD_MODULE_FILE) > sizeof(path)) {
		*why = "the path of libmemplan.so is too long";
		return NULL;
	}
	memcpy(path, self.dli_fname, dir);
	memcpy(path + dir, RECORD_MODULE_FILE, sizeof(RECORD_MODULE_FILE));
	void *module = dlopen(path, (to_record ? RTLD_NOW : RTLD_LAZY) | RTLD_LOCAL);
	const struct record_module *table = module ? dlsym(module, RECORD_MODULE_SYMBOL) : NULL;
	if (!table) {
		const char *error = dlerror();
		*why = error ? error : RECORD_MODULE_FILE " has no " RECORD_MODULE_SYMBOL;
	}
	return table;
}

/* Called by dlopen's wrapper while record_module_pending is set, with the
 * program's arguments saved. Cleared first: the module's own dlopen comes
 * back through the wrapper. */
__attribute__((visibility("hidden"), used)) void record_module_open_late(void)
{
	const char *why;

	if (!atomic_exchange(&record_module_pending, false))
		return;
	guard_enter(); /* the loader's allocations are memplan's */
	record_module_open(false, &why);
	guard_leave();
}
