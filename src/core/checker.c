/* The independent plan checker. It sweeps time in order (frees before allocations
 * at equal times, since lifetimes are half-open) and keeps the live blocks ordered
 * by offset in a Fenwick tree over offset ranks. While the live blocks are pairwise
 * disjoint, a newly live block overlaps one of them if and only if it overlaps its
 * nearest neighbour below or above, so two neighbour checks per allocation suffice:
 * O(n log n) overall. It deliberately shares no code with the planner. */
#include "checker.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

struct checker_event {
	uint64_t t;
	size_t index;
	int is_alloc; /* 0 sorts frees first */
};

static int cmp_event(const void *pa, const void *pb)
{
	const struct checker_event *a = pa, *b = pb;

	if (a->t != b->t)
		return a->t < b->t ? -1 : 1;
	if (a->is_alloc != b->is_alloc)
		return a->is_alloc - b->is_alloc;
	return a->index < b->index ? -1 : a->index > b->index;
}

struct offset_key {
	uint64_t offset_bytes;
	size_t index;
};

static int cmp_offset_key(const void *pa, const void *pb)
{
	const struct offset_key *a = pa, *b = pb;

	if (a->offset_bytes != b->offset_bytes)
		return a->offset_bytes < b->offset_bytes ? -1 : 1;
	return a->index < b->index ? -1 : a->index > b->index;
}

static void fenwick_add(int32_t *tree, size_t m, size_t pos, int32_t delta)
{
	for (size_t i = pos + 1; i <= m; i += i & (~i + 1))
		tree[i] += delta;
}

static size_t fenwick_prefix(const int32_t *tree, size_t pos_end)
{
	size_t sum = 0;

	for (size_t i = pos_end; i > 0; i -= i & (~i + 1))
		sum += (size_t)tree[i];
	return sum;
}

/* Position (0-based) of the k-th present element, k >= 1. */
static size_t fenwick_kth(const int32_t *tree, size_t m, size_t k)
{
	size_t pos = 0, step = 1;

	while (step * 2 <= m)
		step *= 2;
	for (; step; step /= 2) {
		if (pos + step <= m && (size_t)tree[pos + step] < k) {
			pos += step;
			k -= (size_t)tree[pos];
		}
	}
	return pos;
}

static int overlap_in_space(const struct block *a, const struct block *b)
{
	return a->offset_bytes < b->offset_bytes + b->size_bytes &&
	       b->offset_bytes < a->offset_bytes + a->size_bytes;
}

int checker_validate(const struct block *blocks, size_t n, uint64_t arena_bytes, char *why,
		     size_t why_len)
{
	struct checker_event *ev = NULL;
	struct offset_key *keys = NULL;
	size_t *rank = NULL, m = 0, nev = 0;
	int32_t *tree = NULL;
	int ret = 0;

	if (why && why_len)
		why[0] = 0;
	for (size_t i = 0; i < n; i++) {
		const struct block *b = &blocks[i];
		if (!b->align_bytes || (b->align_bytes & (b->align_bytes - 1))) {
			snprintf(why, why_len,
				 "block %zu: alignment %" PRIu64 " is not a power of two", i,
				 b->align_bytes);
			return -EINVAL;
		}
		if (b->offset_bytes % b->align_bytes) {
			snprintf(why, why_len,
				 "block %zu: offset %" PRIu64 " is not a multiple of its"
				 " alignment %" PRIu64,
				 i, b->offset_bytes, b->align_bytes);
			return -EINVAL;
		}
		if (!b->size_bytes)
			continue;
		if (b->t_end <= b->t_start) {
			snprintf(why, why_len,
				 "block %zu: empty lifetime [%" PRIu64 ", %" PRIu64 ")", i,
				 b->t_start, b->t_end);
			return -EINVAL;
		}
		if (b->offset_bytes > arena_bytes ||
		    b->size_bytes > arena_bytes - b->offset_bytes) {
			snprintf(why, why_len,
				 "block %zu: [%" PRIu64 ", +%" PRIu64 ") exceeds the"
				 " arena of %" PRIu64 " bytes",
				 i, b->offset_bytes, b->size_bytes, arena_bytes);
			return -EINVAL;
		}
		m++;
	}
	if (!m)
		return 0;

	ev = malloc(2 * m * sizeof(*ev));
	keys = malloc(m * sizeof(*keys));
	rank = malloc(n * sizeof(*rank));
	tree = calloc(m + 1, sizeof(*tree));
	if (!ev || !keys || !rank || !tree) {
		ret = -ENOMEM;
		goto err_free;
	}
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (!blocks[i].size_bytes)
			continue;
		keys[k].offset_bytes = blocks[i].offset_bytes;
		keys[k++].index = i;
		ev[nev++] = (struct checker_event){blocks[i].t_start, i, 1};
		/* A block that never ends needs no free event. */
		if (blocks[i].t_end != BLOCK_T_INFINITY)
			ev[nev++] = (struct checker_event){blocks[i].t_end, i, 0};
	}
	qsort(keys, m, sizeof(*keys), cmp_offset_key);
	for (size_t r = 0; r < m; r++)
		rank[keys[r].index] = r;
	qsort(ev, nev, sizeof(*ev), cmp_event);

	for (size_t e = 0; e < nev; e++) {
		size_t i = ev[e].index, r = rank[i];
		if (!ev[e].is_alloc) {
			fenwick_add(tree, m, r, -1);
			continue;
		}
		size_t below = fenwick_prefix(tree, r);
		size_t total = fenwick_prefix(tree, m);
		size_t nb[2], nnb = 0;
		if (below > 0)
			nb[nnb++] = keys[fenwick_kth(tree, m, below)].index;
		if (below < total)
			nb[nnb++] = keys[fenwick_kth(tree, m, below + 1)].index;
		for (size_t j = 0; j < nnb; j++) {
			if (overlap_in_space(&blocks[i], &blocks[nb[j]])) {
				size_t a = i < nb[j] ? i : nb[j], b = i < nb[j] ? nb[j] : i;
				snprintf(why, why_len,
					 "blocks %zu and %zu overlap: [%" PRIu64 ", +%" PRIu64
					 ") live [%" PRIu64 ", %" PRIu64 ") and [%" PRIu64
					 ", +%" PRIu64 ") live [%" PRIu64 ", %" PRIu64 ")",
					 a, b, blocks[a].offset_bytes, blocks[a].size_bytes,
					 blocks[a].t_start, blocks[a].t_end, blocks[b].offset_bytes,
					 blocks[b].size_bytes, blocks[b].t_start, blocks[b].t_end);
				ret = -EINVAL;
				goto err_free;
			}
		}
		fenwick_add(tree, m, r, 1);
	}

err_free:
	free(ev);
	free(keys);
	free(rank);
	free(tree);
	return ret;
}
