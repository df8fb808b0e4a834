/* Event-order packing, see event_packer.h: the blocks' events, sorted by time, drive
 * an online offset allocator (offset_allocator.h). */
#define _GNU_SOURCE /* qsort_r */
#include "event_packer.h"

#include "offset_allocator.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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
	struct offset_allocator p;
	uint64_t unit = 4096;
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
	for (size_t i = 0; i < n; i++)
		while (blocks[i].size_bytes % unit)
			unit /= 2;
	offset_allocator_init(&p, unit);
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
			uint32_t got =
			    offset_allocator_take(&p, blocks[i].size_bytes, blocks[i].align_bytes,
						  &blocks[i].offset_bytes);
			if (got == OFFSET_ALLOCATOR_NONE) {
				r = -ENOMEM;
				goto out;
			}
			range_of[i] = got;
			live += blocks[i].size_bytes;
			if (live > peak)
				peak = live;
		} else {
			offset_allocator_give(&p, range_of[i]);
			live -= blocks[i].size_bytes;
		}
	}
	*arena_bytes = offset_allocator_high_water(&p);
	*lower_bound_bytes = peak;
	r = 0;
out:
	free(ev);
	free(range_of);
	offset_allocator_fini(&p);
	return r;
}
