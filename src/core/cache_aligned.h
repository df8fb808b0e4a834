/* Growing a table whose records are laid out to share no cache line with each
 * other (32 bytes, two to a line): the table must start on a line. malloc only
 * promises 16 bytes, and a large block starts 16 bytes into its page, which
 * would put every other record across two lines: two misses where one should
 * do, on tables that are read at random. */
#pragma once

#include <stdlib.h>
#include <string.h>

#define CACHE_LINE_BYTES 64

/* Like realloc (table may be NULL), but the result starts on a cache line. The
 * first old_bytes are kept. Returns NULL, table untouched, when out of memory. */
static inline void *cache_aligned_grow(void *table, size_t old_bytes, size_t new_bytes)
{
	void *grown;

	if (posix_memalign(&grown, CACHE_LINE_BYTES, new_bytes) != 0)
		return NULL;
	if (old_bytes)
		memcpy(grown, table, old_bytes);
	free(table);
	return grown;
}
