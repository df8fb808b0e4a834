/* The replay arena and its occupancy check, see arena.h for the soundness argument. */
#define _GNU_SOURCE
#include "arena.h"

#include <errno.h>
#include <stdatomic.h>
#include <sys/mman.h>

uintptr_t arena_base;
uint64_t arena_bytes;

/* One bit per granule each; one mapping holds all three. */
static _Atomic uint64_t *occupied, *starts, *ends;

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

/* The bits of granules [bit, bit + count) within one word. */
static uint64_t run_mask(uint64_t bit, uint64_t count)
{
	return count >= 64 ? ~UINT64_C(0) : ((UINT64_C(1) << count) - 1) << bit;
}

/* Clears the occupied bits of granules [first, first + count). */
static void range_clear(uint64_t first, uint64_t count)
{
	while (count) {
		uint64_t bit = first % 64, take = 64 - bit < count ? 64 - bit : count;
		atomic_fetch_and_explicit(&occupied[first / 64], ~run_mask(bit, take),
					  memory_order_release);
		first += take;
		count -= take;
	}
}

/* Sets the occupied bits of granules [first, first + count) if every one of them
 * is clear, word by word with compare-and-swap. If a word has a bit already set,
 * the words taken so far are given back and the claim fails. */
static bool range_take(uint64_t first, uint64_t count)
{
	uint64_t at = first, left = count;

	while (left) {
		uint64_t bit = at % 64, take = 64 - bit < left ? 64 - bit : left;
		uint64_t mask = run_mask(bit, take);
		_Atomic uint64_t *word = &occupied[at / 64];
		uint64_t old = atomic_load_explicit(word, memory_order_relaxed);
		do {
			if (old & mask) {
				range_clear(first, at - first);
				return false;
			}
		} while (!atomic_compare_exchange_weak_explicit(word, &old, old | mask,
								memory_order_acquire,
								memory_order_relaxed));
		at += take;
		left -= take;
	}
	return true;
}

static void bit_set(_Atomic uint64_t *bits, uint64_t i)
{
	atomic_fetch_or_explicit(&bits[i / 64], UINT64_C(1) << (i % 64), memory_order_release);
}

/* Clears bit i; returns whether it was set. */
static bool bit_take(_Atomic uint64_t *bits, uint64_t i)
{
	uint64_t bit = UINT64_C(1) << (i % 64);

	return atomic_fetch_and_explicit(&bits[i / 64], ~bit, memory_order_acq_rel) & bit;
}

/* The first set bit at or after i (one exists: every live start has its end). */
static uint64_t next_set(_Atomic uint64_t *bits, uint64_t i)
{
	uint64_t word = i / 64;
	uint64_t w = atomic_load_explicit(&bits[word], memory_order_acquire) &
		     (~UINT64_C(0) << (i % 64));

	while (!w)
		w = atomic_load_explicit(&bits[++word], memory_order_acquire);
	return word * 64 + (uint64_t)__builtin_ctzll(w);
}

void *arena_claim(uint64_t offset_bytes, uint64_t size_bytes)
{
	uint64_t first = offset_bytes / PLAN_GRANULE_BYTES, count = granules_of(size_bytes);

	if (!count || !range_take(first, count))
		return NULL;
	bit_set(ends, first + count - 1);
	bit_set(starts, first);
	return (void *)(arena_base + offset_bytes);
}

bool arena_release(const void *p)
{
	uint64_t offset = (uintptr_t)p - arena_base, g = offset / PLAN_GRANULE_BYTES, last;

	/* Whoever clears the start bit owns the release: a racing double free finds
	 * it clear and does nothing. */
	if (offset % PLAN_GRANULE_BYTES || !bit_take(starts, g))
		return false;
	last = next_set(ends, g);
	bit_take(ends, last);
	range_clear(g, last - g + 1);
	return true;
}

size_t arena_block_bytes(const void *p)
{
	uint64_t offset = (uintptr_t)p - arena_base, g = offset / PLAN_GRANULE_BYTES;
	uint64_t bit = UINT64_C(1) << (g % 64);

	if (offset % PLAN_GRANULE_BYTES ||
	    !(atomic_load_explicit(&starts[g / 64], memory_order_acquire) & bit))
		return 0;
	return (size_t)((next_set(ends, g) - g + 1) * PLAN_GRANULE_BYTES);
}

