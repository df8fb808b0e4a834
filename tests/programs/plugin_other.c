/* Another library for plugin_host, which loads it where plugin.so was just
 * unloaded: a call site in it must be its own, not plugin.so's. */
#include <stdlib.h>
#include <string.h>

char *other_alloc(size_t n);

__attribute__((visibility("default"), noinline)) char *other_alloc(size_t n)
{
	char *p = malloc(n + 8);

	if (p)
		memset(p, 'o', n + 8);
	return p;
}
