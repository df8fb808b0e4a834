/* The replay arena and its occupancy check, see arena.h for the soundness argument. */
#define _GNU_SOURCE
#include "arena.h"

#include <errno.h>
#include <pthread.h>
#include <sys/mman.h>

#include "addr_map.h"

uintptr_t arena_base;
uint64_t arena_bytes;

static pthread_mutex_t arena_mutex = PTHREAD_MUTEX_INITIALIZER;
static uint64_t *occupied; /* one bit per granule */
static struct addr_map live; /* offset + 1 -> entry index */
static const struct plan_entry *plan_entries;

static uint64_t granules_of(uint64_t bytes)
{
	return (bytes + PLAN_GRANULE_BYTES - 1) / PLAN_GRANULE_BYTES;
}

int arena_map(uint64_t bytes, const struct plan_entry *entries, bool prefault)
{
	uint64_t map_bytes = bytes + PLAN_MAX_ALIGN_BYTES;
	uint64_t bitmap_bytes = (granules_of(bytes) + 63) / 64 * 8;
	char *raw, *base;

	if (!bytes)
		return 0;
	raw = mmap(NULL, map_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		   -1, 0);
	if (raw == MAP_FAILED)
		return -errno;
	/* Align the base to the largest alignment a plan may ask for, so an entry's
	 * offset alone decides its alignment; give back the slack. */
	base = (char *)(((uintptr_t)raw + PLAN_MAX_ALIGN_BYTES - 1) &
			~(uintptr_t)(PLAN_MAX_ALIGN_BYTES - 1));
	if (base > raw)
		munmap(raw, (size_t)(base - raw));
	if (raw + map_bytes > base + bytes)
		munmap(base + bytes, (size_t)(raw + map_bytes - (base + bytes)));
	occupied = mmap(NULL, bitmap_bytes, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (occupied == MAP_FAILED) {
		munmap(base, bytes);
		return -errno;
	}
	if (addr_map_init(&live, 1024) < 0) {
		munmap(occupied, bitmap_bytes);
		munmap(base, bytes);
		return -ENOMEM;
	}
	if (prefault) {
		/* Touch every page now so the run itself takes no page faults. */
		for (uint64_t off = 0; off < bytes; off += 4096)
			((volatile char *)base)[off] = 0;
	}
	plan_entries = entries;
	arena_base = (uintptr_t)base;
	arena_bytes = bytes;
	return 0;
}

/* Word-at-a-time test and set/clear over granules [first, first + count). */
static uint64_t run_mask(uint64_t bit, uint64_t count)
{
	return count >= 64 ? ~UINT64_C(0) : ((UINT64_C(1) << count) - 1) << bit;
}

static bool range_clear(uint64_t first, uint64_t count)
{
	while (count) {
		uint64_t bit = first % 64, take = 64 - bit < count ? 64 - bit : count;
		if (occupied[first / 64] & run_mask(bit, take))
			return false;
		first += take;
		count -= take;
	}
	return true;
}

static void range_set(uint64_t first, uint64_t count, bool set)
{
	while (count) {
		uint64_t bit = first % 64, take = 64 - bit < count ? 64 - bit : count;
		if (set)
			occupied[first / 64] |= run_mask(bit, take);
		else
			occupied[first / 64] &= ~run_mask(bit, take);
		first += take;
		count -= take;
	}
}

void *arena_claim(uint64_t entry)
{
	const struct plan_entry *e = &plan_entries[entry];
	uint64_t first = e->offset_bytes / PLAN_GRANULE_BYTES, count = granules_of(e->size_bytes);
	void *p = NULL;

	pthread_mutex_lock(&arena_mutex);
	if (range_clear(first, count) && addr_map_put(&live, e->offset_bytes + 1, entry) == 0) {
		range_set(first, count, true);
		p = (void *)(arena_base + e->offset_bytes);
	}
	pthread_mutex_unlock(&arena_mutex);
	return p;
}

bool arena_release(const void *p)
{
	uint64_t offset = (uintptr_t)p - arena_base, entry;
	bool found;

	pthread_mutex_lock(&arena_mutex);
	found = addr_map_remove(&live, offset + 1, &entry);
	if (found)
		range_set(offset / PLAN_GRANULE_BYTES, granules_of(plan_entries[entry].size_bytes),
			  false);
	pthread_mutex_unlock(&arena_mutex);
	return found;
}

bool arena_lookup(const void *p, uint64_t *entry)
{
	bool found;

	pthread_mutex_lock(&arena_mutex);
	found = addr_map_get(&live, (uintptr_t)p - arena_base + 1, entry);
	pthread_mutex_unlock(&arena_mutex);
	return found;
}

void arena_before_fork(void)
{
	pthread_mutex_lock(&arena_mutex);
}

void arena_after_fork_parent(void)
{
	pthread_mutex_unlock(&arena_mutex);
}

void arena_after_fork_child(void)
{
	pthread_mutex_init(&arena_mutex, NULL);
}
