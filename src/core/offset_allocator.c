/* The online offset allocator, see offset_allocator.h.
 *
 * The arena is a list of physical ranges, each free or used, in offset order,
 * plus untouched space above the high-water mark. Free ranges sit in segregated
 * lists by size class (16 linear classes below 256 bytes, then 16 per power of
 * two), with a bitmap of non-empty classes. An allocation rounds its size up to a
 * class boundary and takes the first range of the first non-empty class at or
 * above it, which is guaranteed to fit ("good fit" in O(1)); it splits off the
 * rest. A free merges with free neighbours. */
#include "offset_allocator.h"

#include "cache_aligned.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Read at random, two to a cache line (cache_aligned.h). */
_Static_assert(sizeof(struct offset_range) == 32, "a range is half a cache line");

#define SMALL_LIMIT 256u /* below: one class per 16 bytes */
#define SL_BITS	    4u
#define NONE	    OFFSET_ALLOCATOR_NONE

static bool is_free(const struct offset_allocator *p, uint32_t r)
{
	return p->free_bits[r / 64] >> (r % 64) & 1;
}

static void set_free(struct offset_allocator *p, uint32_t r)
{
	p->free_bits[r / 64] |= UINT64_C(1) << (r % 64);
}

static void set_used(struct offset_allocator *p, uint32_t r)
{
	p->free_bits[r / 64] &= ~(UINT64_C(1) << (r % 64));
}

static unsigned class_down(uint64_t size)
{
	if (size < SMALL_LIMIT)
		return (unsigned)(size >> 4);
	unsigned fl = 63u - (unsigned)__builtin_clzll(size);
	return 16u + (fl - 8u) * 16u + (unsigned)((size >> (fl - SL_BITS)) & 15u);
}

/* The lowest class whose every member is at least size bytes. */
static unsigned class_up(uint64_t size)
{
	if (size < SMALL_LIMIT)
		return (unsigned)((size + 15) >> 4);
	unsigned fl = 63u - (unsigned)__builtin_clzll(size);
	uint64_t step = UINT64_C(1) << (fl - SL_BITS);
	if (size & (step - 1))
		return class_down(size) + 1;
	return class_down(size);
}

static void list_insert(struct offset_allocator *p, uint32_t r)
{
	unsigned c = class_down(p->ranges[r].size);

	set_free(p, r);
	p->ranges[r].prev_free = NONE;
	p->ranges[r].next_free = p->heads[c];
	if (p->heads[c] != NONE)
		p->ranges[p->heads[c]].prev_free = r;
	p->heads[c] = r;
	p->nonempty[c / 64] |= UINT64_C(1) << (c % 64);
}

static void list_remove(struct offset_allocator *p, uint32_t r)
{
	struct offset_range *x = &p->ranges[r];
	unsigned c = class_down(x->size);

	if (x->prev_free != NONE)
		p->ranges[x->prev_free].next_free = x->next_free;
	else
		p->heads[c] = x->next_free;
	if (x->next_free != NONE)
		p->ranges[x->next_free].prev_free = x->prev_free;
	if (p->heads[c] == NONE)
		p->nonempty[c / 64] &= ~(UINT64_C(1) << (c % 64));
	set_used(p, r);
}

static uint32_t first_class_at_least(const struct offset_allocator *p, unsigned c)
{
	for (unsigned w = c / 64; w < sizeof(p->nonempty) / 8; w++) {
		uint64_t bits = p->nonempty[w];
		if (w == c / 64)
			bits &= ~UINT64_C(0) << (c % 64);
		if (bits)
			return w * 64 + (unsigned)__builtin_ctzll(bits);
	}
	return NONE;
}

static uint32_t new_range(struct offset_allocator *p, uint64_t offset, uint64_t size)
{
	uint32_t r;

	if (p->recycled) {
		r = p->recycle[--p->recycled];
	} else {
		if (p->count == p->capacity) {
			uint32_t cap = p->capacity ? 2 * p->capacity : 1024;
			struct offset_range *grown = cache_aligned_grow(
			    p->ranges, p->capacity * sizeof(*grown), cap * sizeof(*grown));
			uint32_t *stack = realloc(p->recycle, cap * sizeof(*stack));
			uint64_t *bits = realloc(p->free_bits, cap / 64 * sizeof(*bits));
			if (grown)
				p->ranges = grown;
			if (stack)
				p->recycle = stack;
			if (bits)
				p->free_bits = bits;
			if (!grown || !stack || !bits)
				return NONE;
			memset(bits + p->capacity / 64, 0,
			       (cap - p->capacity) / 64 * sizeof(*bits));
			p->capacity = cap;
		}
		r = p->count++;
	}
	p->ranges[r] = (struct offset_range){offset, size, NONE, NONE, NONE, NONE};
	return r;
}

/* Splits head bytes off the front of range r as a new free range before it. */
static int split_front(struct offset_allocator *p, uint32_t r, uint64_t head)
{
	struct offset_range *x = &p->ranges[r];
	uint32_t f = new_range(p, x->offset, head);

	if (f == NONE)
		return -ENOMEM;
	x = &p->ranges[r];
	p->ranges[f].prev_phys = x->prev_phys;
	p->ranges[f].next_phys = r;
	if (x->prev_phys != NONE)
		p->ranges[x->prev_phys].next_phys = f;
	x->prev_phys = f;
	x->offset += head;
	x->size -= head;
	list_insert(p, f);
	return 0;
}

/* Splits everything past size bytes off the end of range r as a new free range. */
static int split_back(struct offset_allocator *p, uint32_t r, uint64_t size)
{
	struct offset_range *x = &p->ranges[r];
	uint32_t b;

	if (x->size == size)
		return 0;
	b = new_range(p, x->offset + size, x->size - size);
	if (b == NONE)
		return -ENOMEM;
	x = &p->ranges[r];
	p->ranges[b].prev_phys = r;
	p->ranges[b].next_phys = x->next_phys;
	if (x->next_phys != NONE)
		p->ranges[x->next_phys].prev_phys = b;
	else
		p->last = b;
	x->next_phys = b;
	x->size = size;
	list_insert(p, b);
	return 0;
}

/* Looks for the best fit among the first few ranges of the class that need
 * falls in (whose members may or may not fit): TLSF alone would round the request
 * up to the next class and leave these smaller fits unused. An exact fit ends the
 * search (nothing later can be better): with 16-byte units, each class below 512
 * bytes holds one size, so there the head is taken at once. */
#define CLOSE_FIT_PROBES 16

static uint32_t close_fit(const struct offset_allocator *p, uint64_t need)
{
	uint32_t best = NONE, r = p->heads[class_down(need)];

	for (int probes = 0; r != NONE && probes < CLOSE_FIT_PROBES; probes++) {
		uint64_t size = p->ranges[r].size;
		if (size == need)
			return r;
		if (size >= need && (best == NONE || size < p->ranges[best].size))
			best = r;
		r = p->ranges[r].next_free;
	}
	return best;
}

/* Allocates size bytes aligned to align; returns the range or NONE on ENOMEM. */
static uint32_t allocate(struct offset_allocator *p, uint64_t size, uint64_t align)
{
	/* Every offset is a multiple of unit, so aligning wastes at most align - unit. */
	uint64_t need = size + (align > p->unit ? align - p->unit : 0);
	uint32_t c, r = close_fit(p, need);

	if (r != NONE) {
		list_remove(p, r);
	} else if ((c = first_class_at_least(p, class_up(need))) != NONE) {
		r = p->heads[c];
		list_remove(p, r);
	} else if (p->last != NONE && is_free(p, p->last)) {
		/* Grow the free range at the top just enough. */
		r = p->last;
		list_remove(p, r);
		uint64_t start = (p->ranges[r].offset + align - 1) / align * align;
		uint64_t end = start + size;
		if (end > p->high_water) {
			p->ranges[r].size = end - p->ranges[r].offset;
			p->high_water = end;
		}
	} else {
		r = new_range(p, p->high_water, 0);
		if (r == NONE)
			return NONE;
		uint64_t start = (p->high_water + align - 1) / align * align;
		p->ranges[r].size = start + size - p->high_water;
		p->ranges[r].prev_phys = p->last;
		if (p->last != NONE)
			p->ranges[p->last].next_phys = r;
		p->last = r;
		p->high_water = start + size;
	}
	uint64_t offset = p->ranges[r].offset;
	uint64_t head = (offset + align - 1) / align * align - offset;
	if ((head && split_front(p, r, head) < 0) || split_back(p, r, size) < 0)
		return NONE;
	return r;
}

static void release(struct offset_allocator *p, uint32_t r)
{
	struct offset_range *x = &p->ranges[r];
	uint32_t prev = x->prev_phys, next = x->next_phys;

	if (next != NONE && is_free(p, next)) {
		list_remove(p, next);
		x->size += p->ranges[next].size;
		x->next_phys = p->ranges[next].next_phys;
		if (x->next_phys != NONE)
			p->ranges[x->next_phys].prev_phys = r;
		else
			p->last = r;
		p->recycle[p->recycled++] = next;
	}
	if (prev != NONE && is_free(p, prev)) {
		list_remove(p, prev);
		p->ranges[prev].size += x->size;
		p->ranges[prev].next_phys = x->next_phys;
		if (x->next_phys != NONE)
			p->ranges[x->next_phys].prev_phys = prev;
		else
			p->last = prev;
		p->recycle[p->recycled++] = r;
		r = prev;
	}
	list_insert(p, r);
}

void offset_allocator_init(struct offset_allocator *a, uint64_t unit)
{
	memset(a, 0, sizeof(*a));
	memset(a->heads, 0xff, sizeof(a->heads));
	a->last = NONE;
	a->unit = unit;
}

uint32_t offset_allocator_take(struct offset_allocator *a, uint64_t size, uint64_t align,
			       uint64_t *offset)
{
	uint32_t r = allocate(a, size, align);

	if (r != NONE)
		*offset = a->ranges[r].offset;
	return r;
}

void offset_allocator_give(struct offset_allocator *a, uint32_t handle)
{
	release(a, handle);
}

void offset_allocator_fini(struct offset_allocator *a)
{
	free(a->ranges);
	free(a->recycle);
	free(a->free_bits);
	a->ranges = NULL;
	a->recycle = NULL;
	a->free_bits = NULL;
}
