/* Growing arrays of the CLI's tables. */
#pragma once

#include <stdint.h>
#include <stdlib.h>

/* items (room for *cap of elem bytes each, full) grown to twice its room, or
 * to first if it has none: the new array, *cap updated; NULL if memory runs
 * out or the size overflows, items and *cap then as they were. */
static inline void *array_grow(void *items, size_t *cap, size_t elem, size_t first)
{
	size_t room = *cap ? 2 * *cap : first;

	if (room < *cap || room > SIZE_MAX / elem)
		return NULL;
	void *grown = realloc(items, room * elem);
	if (grown)
		*cap = room;
	return grown;
}
