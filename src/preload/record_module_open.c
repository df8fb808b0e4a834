/* Finding and opening libmemplan-record.so, see record_module.h. */
#define _GNU_SOURCE
#include "record_module.h"

#include <dlfcn.h>
#include <limits.h>
#include <string.h>

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
