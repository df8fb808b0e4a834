/* An online offset allocator: hands out aligned ranges of an unbounded arena and
 * takes them back, like a malloc that manages offsets instead of memory, with
 * two-level segregated fit (TLSF-style) and coalescing: O(1) per operation. The
 * arena it needs is its high-water mark. The event packer (event_packer.h) drives
 * it over a finished trace; the recorder drives it while the program runs, so the
 * plan's offsets are known the moment recording ends. Pure: no global state. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#define OFFSET_ALLOCATOR_NONE	 UINT32_MAX
#define OFFSET_ALLOCATOR_CLASSES (16u + (64u - 8u) * 16u)

/* 32 bytes: two to a cache line. Whether a range is free is kept apart, in a
 * bitmap, so that a give need not touch neighbours that are in use. */
struct offset_range {
	uint64_t offset, size;
	uint32_t prev_phys, next_phys; /* neighbours in offset order */
	uint32_t prev_free, next_free; /* neighbours in its size class, if free */
};

/* The fields are private; the struct is public so that it can be embedded. */
struct offset_allocator {
	struct offset_range *ranges;
	uint64_t *free_bits;		    /* by range: set while the range is free */
	uint32_t count, capacity, recycled; /* recycled: a stack of unused slots */
	uint32_t *recycle;
	uint32_t last; /* the range that ends at high water */
	uint64_t high_water;
	uint64_t unit; /* a power of two dividing every size, hence every offset */
	uint32_t heads[OFFSET_ALLOCATOR_CLASSES];
	uint64_t nonempty[(OFFSET_ALLOCATOR_CLASSES + 63) / 64];
};

/* unit: a power of two that divides every size that will be asked for; alignment
 * up to unit is then free. Does not allocate. */
void offset_allocator_init(struct offset_allocator *a, uint64_t unit);

/* Takes size bytes (a multiple of unit, may be 0) aligned to align (a power of
 * two). Returns the range's handle and sets *offset, or OFFSET_ALLOCATOR_NONE
 * (out of memory). May allocate. */
uint32_t offset_allocator_take(struct offset_allocator *a, uint64_t size, uint64_t align,
			       uint64_t *offset);

/* Gives back a range taken and not yet given back. Does not allocate. */
void offset_allocator_give(struct offset_allocator *a, uint32_t handle);

/* The offset of a range taken and not yet given back (what take returned). */
static inline uint64_t offset_allocator_offset(const struct offset_allocator *a, uint32_t handle)
{
	return a->ranges[handle].offset;
}

/* The arena the ranges taken so far need: the highest end ever handed out. */
static inline uint64_t offset_allocator_high_water(const struct offset_allocator *a)
{
	return a->high_water;
}

void offset_allocator_fini(struct offset_allocator *a);
