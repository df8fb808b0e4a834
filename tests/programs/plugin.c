/* A library that plugin_host loads with dlopen: its call site of malloc lies in
 * a module that comes and goes, and is mapped somewhere else each time. */
#include <stdlib.h>
#include <string.h>

char *plugin_alloc(size_t n);

__attribute__((visibility("default"), noinline)) char *plugin_alloc(size_t n)
{
	char *p = malloc(n);

	if (p)
		memset(p, 'p', n);
	return p;
}
