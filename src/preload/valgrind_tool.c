/* Valgrind tools that replace the allocator, see valgrind_tool.h. */
#include "valgrind_tool.h"

#include <string.h>

bool valgrind_tool_replaces_allocator(const char *ld_preload)
{
	static const char prefix[] = "vgpreload_", core[] = "core-";
	const char *p = ld_preload;

	/* Entries are separated by colons or spaces; the file name is what
	 * counts: /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so. */
	while (p && (p = strstr(p, prefix))) {
		const bool starts_name =
		    p == ld_preload || p[-1] == '/' || p[-1] == ':' || p[-1] == ' ';
		p += sizeof(prefix) - 1;
		if (starts_name && strncmp(p, core, sizeof(core) - 1) != 0)
			return true;
	}
	return false;
}
