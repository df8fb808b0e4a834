/* A hash map from non-zero 64-bit keys (addresses, offsets) to 64-bit values, for
 * the allocation paths: open addressing with linear probing and backward-shift
 * deletion, so a churn of inserts and removes leaves no tombstones and lookups
 * stay short. Not thread-safe: callers hold their own lock. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct addr_map_slot {
	uint64_t key; /* 0: empty */
	uint64_t value;
};

struct addr_map {
	struct addr_map_slot *slots;
	uint64_t mask; /* capacity - 1; capacity is a power of two */
	uint64_t count;
};

/* Initialises an empty map with room for about capacity keys before it grows.
 * Returns 0 or -ENOMEM. May allocate. */
int addr_map_init(struct addr_map *map, uint64_t capacity);

void addr_map_fini(struct addr_map *map);

/* Removes every key, keeping the table's room. Does not allocate. */
void addr_map_clear(struct addr_map *map);

/* Inserts or replaces key (non-zero). Returns 0 or -ENOMEM (map unchanged).
 * May allocate (when it grows). */
int addr_map_put(struct addr_map *map, uint64_t key, uint64_t value);

/* Looks key up; returns true and sets *value if present. Does not allocate. */
bool addr_map_get(const struct addr_map *map, uint64_t key, uint64_t *value);

/* A multiplicative mix of key, spread over all 64 bits: addresses share low
 * zero bits and high prefixes. */
static inline uint64_t addr_map_mix(uint64_t key)
{
	key ^= key >> 33;
	key *= UINT64_C(0xff51afd7ed558ccd);
	key ^= key >> 33;
	return key;
}

/* Where key's lookup starts. */
static inline uint64_t addr_map_home(const struct addr_map *map, uint64_t key)
{
	return addr_map_mix(key) & map->mask;
}

/* Starts loading the slot where key's lookup starts, so that a put or remove of
 * key a little later finds it in cache. Does not allocate; changes nothing. */
static inline void addr_map_prefetch(const struct addr_map *map, uint64_t key)
{
	__builtin_prefetch(&map->slots[addr_map_home(map, key)]);
}

/* Removes key; returns true and sets *value (may be NULL) if it was present. Does
 * not allocate. */
bool addr_map_remove(struct addr_map *map, uint64_t key, uint64_t *value);
