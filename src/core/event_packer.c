/* Event-order packing with a TLSF-style offset allocator, see event_packer.h.
 *
 * The arena is a list of physical ranges, each free or used, in offset order,
 * plus untouched space above the high-water mark. Free ranges sit in segregated
 * lists by size class (16 linear classes below 256 bytes, then 16 per power of
 * two), with a bitmap of non-empty classes. An allocation rounds its size up to a
 * class boundary and takes the first range of the first non-empty class at or
 * above it, which is guaranteed to fit ("good fit" in O(1)); it splits off the
 * rest. A free merges with free neighbours. */
#define _GNU_SOURCE /* qsort_r */
#include "event_packer.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define SMALL_LIMIT 256u /* below: one class per 16 bytes */
#define SL_BITS	    4u
#define CLASS_COUNT (16u + (64u - 8u) * 16u)
#define NONE	    UINT32_MAX

struct range {
	uint64_t offset, size;
	uint32_t prev_phys, next_phys; /* neighbours in offset order */
	uint32_t prev_free, next_free; /* neighbours in its size class, if free */
	bool free;
};

struct packer {
	struct range *ranges;
	uint32_t count, capacity, recycled; /* recycled: a stack of unused slots */
	uint32_t *recycle;
	uint32_t last; /* the range that ends at high water */
	uint64_t high_water;
	uint64_t unit; /* a power of two dividing every size, hence every offset */
	uint32_t heads[CLASS_COUNT];
	uint64_t nonempty[(CLASS_COUNT + 63) / 64];
};

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

static void list_insert(struct packer *p, uint32_t r)
{
	unsigned c = class_down(p->ranges[r].size);

	p->ranges[r].free = true;
	p->ranges[r].prev_free = NONE;
	p->ranges[r].next_free = p->heads[c];
	if (p->heads[c] != NONE)
		p->ranges[p->heads[c]].prev_free = r;
	p->heads[c] = r;
	p->nonempty[c / 64] |= UINT64_C(1) << (c % 64);
}

static void list_remove(struct packer *p, uint32_t r)
{
	struct range *x = &p->ranges[r];
	unsigned c = class_down(x->size);

	if (x->prev_free != NONE)
		p->ranges[x->prev_free].next_free = x->next_free;
	else
		p->heads[c] = x->next_free;
	if (x->next_free != NONE)
		p->ranges[x->next_free].prev_free = x->prev_free;
	if (p->heads[c] == NONE)
		p->nonempty[c / 64] &= ~(UINT64_C(1) << (c % 64));
	x->free = false;
}

static uint32_t first_class_at_least(const struct packer *p, unsigned c)
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

static uint32_t new_range(struct packer *p, uint64_t offset, uint64_t size)
{
	uint32_t r;

	if (p->recycled) {
		r = p->recycle[--p->recycled];
	} else {
		if (p->count == p->capacity) {
			uint32_t cap = p->capacity ? 2 * p->capacity : 1024;
			struct range *grown = realloc(p->ranges, cap * sizeof(*grown));
			uint32_t *stack = realloc(p->recycle, cap * sizeof(*stack));
			if (grown)
				p->ranges = grown;
			if (stack)
				p->recycle = stack;
			if (!grown || !stack)
				return NONE;
			p->capacity = cap;
		}
		r = p->count++;
	}
	p->ranges[r] = (struct range){offset, size, NONE, NONE, NONE, NONE, false};
	return r;
}

/* Splits head bytes off the front of range r as a new free range before it. */
static int split_front(struct packer *p, uint32_t r, uint64_t head)
{
	struct range *x = &p->ranges[r];
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
static int split_back(struct packer *p, uint32_t r, uint64_t size)
{
	struct range *x = &p->ranges[r];
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
 * up to the next class and leave these smaller fits unused. */
#define CLOSE_FIT_PROBES 16

static uint32_t close_fit(const struct packer *p, uint64_t need)
{
	uint32_t best = NONE, r = p->heads[class_down(need)];

	for (int probes = 0; r != NONE && probes < CLOSE_FIT_PROBES; probes++) {
		uint64_t size = p->ranges[r].size;
		if (size >= need && (best == NONE || size < p->ranges[best].size))
			best = r;
		r = p->ranges[r].next_free;
	}
	return best;
}

/* Allocates size bytes aligned to align; returns the range or NONE on ENOMEM. */
static uint32_t allocate(struct packer *p, uint64_t size, uint64_t align)
{
	/* Every offset is a multiple of unit, so aligning wastes at most align - unit. */
	uint64_t need = size + (align > p->unit ? align - p->unit : 0);
	uint32_t c, r = close_fit(p, need);

	if (r != NONE) {
		list_remove(p, r);
	} else if ((c = first_class_at_least(p, class_up(need))) != NONE) {
		r = p->heads[c];
		list_remove(p, r);
	} else if (p->last != NONE && p->ranges[p->last].free) {
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

static void release(struct packer *p, uint32_t r)
{
	struct range *x = &p->ranges[r];
	uint32_t prev = x->prev_phys, next = x->next_phys;

	if (next != NONE && p->ranges[next].free) {
		list_remove(p, next);
		x->size += p->ranges[next].size;
		x->next_phys = p->ranges[next].next_phys;
		if (x->next_phys != NONE)
			p->ranges[x->next_phys].prev_phys = r;
		else
			p->last = r;
		p->recycle[p->recycled++] = next;
	}
	if (prev != NONE && p->ranges[prev].free) {
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

/* An event is block index * 2 + 1 for its allocation, + 0 for its free; at equal
 * times frees come first, then index order. */
static uint64_t event_time(const struct block *blocks, uint64_t e)
{
	const struct block *b = &blocks[e >> 1];

	return (e & 1) ? b->t_start : b->t_end;
}

static int event_cmp(const void *pa, const void *pb, void *ctx)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
	uint64_t ta = event_time(ctx, a), tb = event_time(ctx, b);

	if (ta != tb)
		return ta < tb ? -1 : 1;
	if ((a & 1) != (b & 1))
		return (a & 1) ? 1 : -1;
	return a < b ? -1 : a > b;
}

/* Lists the events of blocks in time order into ev (2n slots). A counting sort
 * when times are dense, as on a recording's clock (two buckets per tick: frees,
 * then allocations; stable, so index order within a bucket); else qsort_r. */
static int order_events(const struct block *blocks, size_t n, uint64_t *ev, size_t *count)
{
	uint64_t t_max = 0;
	size_t m = 0;

	for (size_t i = 0; i < n; i++) {
		if (!blocks[i].size_bytes)
			continue;
		m += 1 + (blocks[i].t_end != BLOCK_T_INFINITY);
		if (blocks[i].t_start > t_max)
			t_max = blocks[i].t_start;
		if (blocks[i].t_end != BLOCK_T_INFINITY && blocks[i].t_end > t_max)
			t_max = blocks[i].t_end;
	}
	*count = m;
	if (t_max > 4 * (uint64_t)m + 1024 || m >= UINT32_MAX) {
		m = 0;
		for (size_t i = 0; i < n; i++) {
			if (!blocks[i].size_bytes)
				continue;
			ev[m++] = (uint64_t)i * 2 + 1;
			if (blocks[i].t_end != BLOCK_T_INFINITY)
				ev[m++] = (uint64_t)i * 2;
		}
		qsort_r(ev, m, sizeof(*ev), event_cmp, (void *)blocks);
		return 0;
	}
	size_t buckets = 2 * ((size_t)t_max + 1) + 1;
	uint32_t *next = calloc(buckets, sizeof(*next));
	if (!next)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (!blocks[i].size_bytes)
			continue;
		next[2 * blocks[i].t_start + 1 + 1]++;
		if (blocks[i].t_end != BLOCK_T_INFINITY)
			next[2 * blocks[i].t_end + 1]++;
	}
	for (size_t b = 1; b < buckets; b++)
		next[b] += next[b - 1];
	for (size_t i = 0; i < n; i++) {
		if (!blocks[i].size_bytes)
			continue;
		ev[next[2 * blocks[i].t_start + 1]++] = (uint64_t)i * 2 + 1;
		if (blocks[i].t_end != BLOCK_T_INFINITY)
			ev[next[2 * blocks[i].t_end]++] = (uint64_t)i * 2;
	}
	free(next);
	return 0;
}

int event_packer_pack(struct block *blocks, size_t n, uint64_t *arena_bytes,
		      uint64_t *lower_bound_bytes)
{
	struct packer p = {.last = NONE};
	uint64_t *ev;
	uint32_t *range_of;
	uint64_t live = 0, peak = 0;
	size_t m;
	int r = -ENOMEM;

	for (size_t i = 0; i < n; i++) {
		const struct block *b = &blocks[i];
		if (!b->align_bytes || (b->align_bytes & (b->align_bytes - 1)) ||
		    (b->size_bytes && b->t_end <= b->t_start))
			return -EINVAL;
	}
	memset(p.heads, 0xff, sizeof(p.heads));
	p.unit = 4096;
	for (size_t i = 0; i < n; i++)
		while (blocks[i].size_bytes % p.unit)
			p.unit /= 2;
	ev = malloc((n ? 2 * n : 1) * sizeof(*ev));
	range_of = malloc((n ? n : 1) * sizeof(*range_of));
	if (!ev || !range_of)
		goto out;
	r = order_events(blocks, n, ev, &m);
	if (r < 0)
		goto out;
	for (size_t i = 0; i < n; i++)
		blocks[i].offset_bytes = 0;
	for (size_t k = 0; k < m; k++) {
		size_t i = (size_t)(ev[k] >> 1);
		if (ev[k] & 1) {
			uint32_t got = allocate(&p, blocks[i].size_bytes, blocks[i].align_bytes);
			if (got == NONE) {
				r = -ENOMEM;
				goto out;
			}
			range_of[i] = got;
			blocks[i].offset_bytes = p.ranges[got].offset;
			live += blocks[i].size_bytes;
			if (live > peak)
				peak = live;
		} else {
			release(&p, range_of[i]);
			live -= blocks[i].size_bytes;
		}
	}
	*arena_bytes = p.high_water;
	*lower_bound_bytes = peak;
	r = 0;
out:
	free(ev);
	free(range_of);
	free(p.ranges);
	free(p.recycle);
	return r;
}
