/* Open-addressing map, see addr_map.h. Load factor is kept at or below 1/2. */
#include "addr_map.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static uint64_t slot_of(const struct addr_map *map, uint64_t key)
{
	return addr_map_home(map, key);
}

int addr_map_init(struct addr_map *map, uint64_t capacity)
{
	uint64_t slots = 16;

	while (slots < 2 * capacity)
		slots *= 2;
	map->slots = calloc(slots, sizeof(*map->slots));
	if (!map->slots)
		return -ENOMEM;
	map->mask = slots - 1;
	map->count = 0;
	return 0;
}

void addr_map_fini(struct addr_map *map)
{
	free(map->slots);
	map->slots = NULL;
	map->mask = 0;
	map->count = 0;
}

void addr_map_clear(struct addr_map *map)
{
	if (map->slots)
		memset(map->slots, 0, (map->mask + 1) * sizeof(*map->slots));
	map->count = 0;
}

static void insert_new(struct addr_map *map, uint64_t key, uint64_t value)
{
	uint64_t i = slot_of(map, key);

	while (map->slots[i].key)
		i = (i + 1) & map->mask;
	map->slots[i].key = key;
	map->slots[i].value = value;
	map->count++;
}

static int grow(struct addr_map *map)
{
	struct addr_map old = *map;

	if (addr_map_init(map, (old.mask + 1)) < 0) {
		*map = old;
		return -ENOMEM;
	}
	for (uint64_t i = 0; i <= old.mask; i++)
		if (old.slots[i].key)
			insert_new(map, old.slots[i].key, old.slots[i].value);
	free(old.slots);
	return 0;
}

int addr_map_put(struct addr_map *map, uint64_t key, uint64_t value)
{
	uint64_t i = slot_of(map, key);

	for (; map->slots[i].key; i = (i + 1) & map->mask) {
		if (map->slots[i].key == key) {
			map->slots[i].value = value;
			return 0;
		}
	}
	if (2 * (map->count + 1) > map->mask + 1) {
		if (grow(map) < 0)
			return -ENOMEM;
	}
	insert_new(map, key, value);
	return 0;
}

bool addr_map_get(const struct addr_map *map, uint64_t key, uint64_t *value)
{
	for (uint64_t i = slot_of(map, key); map->slots[i].key; i = (i + 1) & map->mask) {
		if (map->slots[i].key == key) {
			*value = map->slots[i].value;
			return true;
		}
	}
	return false;
}

bool addr_map_remove(struct addr_map *map, uint64_t key, uint64_t *value)
{
	uint64_t i = slot_of(map, key);

	for (; map->slots[i].key != key; i = (i + 1) & map->mask)
		if (!map->slots[i].key)
			return false;
	if (value)
		*value = map->slots[i].value;
	/* Backward-shift: pull later members of the probe run into the hole so that
	 * no lookup ever stops early at it. */
	for (uint64_t j = (i + 1) & map->mask; map->slots[j].key; j = (j + 1) & map->mask) {
		uint64_t home = slot_of(map, map->slots[j].key);
		/* Move j into the hole i unless its home lies cyclically in (i, j]. */
		if (((j - home) & map->mask) >= ((j - i) & map->mask)) {
			map->slots[i] = map->slots[j];
			i = j;
		}
	}
	map->slots[i].key = 0;
	map->count--;
	return true;
}
