/* The replay arena and its occupancy check, see arena.h for the soundness argument. */
#define _GNU_SOURCE
#include "arena.h"

#include <errno.h>
#include <pthread.h>
#include <sys/mman.h>

uintptr_t arena_base;
uint64_t arena_bytes;

static pthread_mutex_t arena_mutex = PTHREAD_MUTEX_INITIALIZER;
/* One bit per granule each; one mapping holds all three. */
static uint64_t *occupied, *starts, *ends;

static uint64_t granules_of(uint64_t bytes)
{
	return (bytes + PLAN_GRANULE_BYTES - 1) / PLAN_GRANULE_BYTES;
}

int arena_map(uint64_t bytes, bool prefault)
{
	uint64_t map_bytes = bytes + PLAN_MAX_ALIGN_BYTES;
	uint64_t bitmap_bytes = (granules_of(bytes) + 63) / 64 * 8;
	char *raw, *base;

	if (!bytes)
		return 0;
	raw = mmap(NULL, map_bytes, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
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
	occupied = mmap(NULL, 3 * bitmap_bytes, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (occupied == MAP_FAILED) {
		munmap(base, bytes);
		return -errno;
	}
	starts = occupied + bitmap_bytes / 8;
	ends = starts + bitmap_bytes / 8;
	if (prefault) {
		/* Touch every page now so the run itself takes no page faults. */
		for (uint64_t off = 0; off < bytes; off += 4096)
			((volatile char *)base)[off] = 0;
	}
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

static bool bit_test(const uint64_t *bits, uint64_t i)
{
	return bits[i / 64] >> (i % 64) & 1;
}

static void bit_flip(uint64_t *bits, uint64_t i)
{
	bits[i / 64] ^= UINT64_C(1) << (i % 64);
}

/* The first set bit at or after i (one exists: every live start has its end). */
static uint64_t next_set(const uint64_t *bits, uint64_t i)
{
	uint64_t word = i / 64, w = bits[word] & (~UINT64_C(0) << (i % 64));

	while (!w)
		w = bits[++word];
	return word * 64 + (uint64_t)__builtin_ctzll(w);
}

void *arena_claim(uint64_t offset_bytes, uint64_t size_bytes)
{
	uint64_t first = offset_bytes / PLAN_GRANULE_BYTES, count = granules_of(size_bytes);
	void *p = NULL;

	if (!count)
		return NULL;
	pthread_mutex_lock(&arena_mutex);
	if (range_clear(first, count)) {
		range_set(first, count, true);
		bit_flip(starts, first);
		bit_flip(ends, first + count - 1);
		p = (void *)(arena_base + offset_bytes);
	}
	pthread_mutex_unlock(&arena_mutex);
	return p;
}

/* The last granule of the live block starting at granule g, or UINT64_MAX if no
 * live block starts at p. Call with the mutex held. */
static uint64_t block_last(const void *p)
{
	uint64_t offset = (uintptr_t)p - arena_base, g = offset / PLAN_GRANULE_BYTES;

	if (offset % PLAN_GRANULE_BYTES || !bit_test(starts, g))
		return UINT64_MAX;
	return next_set(ends, g);
}

bool arena_release(const void *p)
{
	uint64_t g = ((uintptr_t)p - arena_base) / PLAN_GRANULE_BYTES, last;

	pthread_mutex_lock(&arena_mutex);
	last = block_last(p);
	if (last != UINT64_MAX) {
		range_set(g, last - g + 1, false);
		bit_flip(starts, g);
		bit_flip(ends, last);
	}
	pthread_mutex_unlock(&arena_mutex);
	return last != UINT64_MAX;
}

size_t arena_block_bytes(const void *p)
{
	uint64_t g = ((uintptr_t)p - arena_base) / PLAN_GRANULE_BYTES, last;

	pthread_mutex_lock(&arena_mutex);
	last = block_last(p);
	pthread_mutex_unlock(&arena_mutex);
	return last == UINT64_MAX ? 0 : (size_t)((last - g + 1) * PLAN_GRANULE_BYTES);
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
