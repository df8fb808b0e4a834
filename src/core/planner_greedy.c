/* Constructive heuristics for one part of the timeline (see planner_greedy.h).
 *
 * greedy_place is the classic "greedy by size, best fit" generalised to any order:
 * the items already placed that overlap the new one in time are found through a
 * max-segment-tree over the start-sorted items (leaf = end time once placed), so
 * the work is proportional to the conflicting pairs rather than to m per item.
 * greedy_linear_scan needs no conflict lists at all and bounds the worst case. */
#define _GNU_SOURCE
#include "planner_greedy.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "planner_treap.h"

double planner_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int radix_sort_pairs(uint64_t *keys, uint32_t *vals, size_t n)
{
	uint64_t *k2 = malloc(n * sizeof(*k2) + 1);
	uint32_t *v2 = malloc(n * sizeof(*v2) + 1);
	uint64_t all_or = 0, all_and = UINT64_MAX;

	if (!k2 || !v2) {
		free(k2);
		free(v2);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		all_or |= keys[i];
		all_and &= keys[i];
	}
	for (unsigned shift = 0; shift < 64; shift += 8) {
		size_t count[257] = {0};
		/* A byte that is the same in every key does not reorder anything. */
		if (!(((all_or ^ all_and) >> shift) & 0xff))
			continue;
		for (size_t i = 0; i < n; i++)
			count[((keys[i] >> shift) & 0xff) + 1]++;
		for (int b = 0; b < 256; b++)
			count[b + 1] += count[b];
		for (size_t i = 0; i < n; i++) {
			size_t d = count[(keys[i] >> shift) & 0xff]++;
			k2[d] = keys[i];
			v2[d] = vals[i];
		}
		memcpy(keys, k2, n * sizeof(*keys));
		memcpy(vals, v2, n * sizeof(*vals));
	}
	free(k2);
	free(v2);
	return 0;
}

static uint64_t align_up(uint64_t x, uint64_t align)
{
	uint64_t r = x & (align - 1);

	if (!r)
		return x;
	/* Saturate instead of wrapping: such a placement is then rejected as too high. */
	return x > UINT64_MAX - (align - r) ? UINT64_MAX : x + (align - r);
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* ---- event-order best fit ---- */

/* A map from 64-bit keys to 64-bit values: open addressing with linear probing
 * and backward-shift deletion, so that lookups stay O(1) without tombstones. */
struct u64_map {
	uint64_t *keys, *vals;
	uint8_t *used;
	size_t mask, count;
};

static int u64_map_init(struct u64_map *h)
{
	h->mask = 1023;
	h->count = 0;
	h->keys = malloc((h->mask + 1) * sizeof(*h->keys));
	h->vals = malloc((h->mask + 1) * sizeof(*h->vals));
	h->used = calloc(h->mask + 1, 1);
	return h->keys && h->vals && h->used ? 0 : -ENOMEM;
}

static void u64_map_free(struct u64_map *h)
{
	free(h->keys);
	free(h->vals);
	free(h->used);
}

static size_t u64_hash(uint64_t k, size_t mask)
{
	k *= 0x9e3779b97f4a7c15ull;
	return (size_t)(k ^ (k >> 29)) & mask;
}

/* Returns the slot of k, or SIZE_MAX. */
static size_t u64_map_find(const struct u64_map *h, uint64_t k)
{
	for (size_t i = u64_hash(k, h->mask);; i = (i + 1) & h->mask) {
		if (!h->used[i])
			return SIZE_MAX;
		if (h->keys[i] == k)
			return i;
	}
}

static int u64_map_put(struct u64_map *h, uint64_t k, uint64_t v);

static int u64_map_grow(struct u64_map *h)
{
	struct u64_map old = *h;

	h->mask = 2 * old.mask + 1;
	h->count = 0;
	h->keys = malloc((h->mask + 1) * sizeof(*h->keys));
	h->vals = malloc((h->mask + 1) * sizeof(*h->vals));
	h->used = calloc(h->mask + 1, 1);
	if (!h->keys || !h->vals || !h->used) {
		u64_map_free(h);
		*h = old;
		return -ENOMEM;
	}
	for (size_t i = 0; i <= old.mask; i++)
		if (old.used[i])
			u64_map_put(h, old.keys[i], old.vals[i]);
	u64_map_free(&old);
	return 0;
}

/* Inserts a key that is not present. */
static int u64_map_put(struct u64_map *h, uint64_t k, uint64_t v)
{
	if (2 * (h->count + 1) > h->mask + 1 && u64_map_grow(h))
		return -ENOMEM;
	size_t i = u64_hash(k, h->mask);
	while (h->used[i])
		i = (i + 1) & h->mask;
	h->used[i] = 1;
	h->keys[i] = k;
	h->vals[i] = v;
	h->count++;
	return 0;
}

static void u64_map_del_slot(struct u64_map *h, size_t i)
{
	size_t j = i;

	h->used[i] = 0;
	h->count--;
	/* Shift back later members of the probe run that may no longer be reachable. */
	for (;;) {
		j = (j + 1) & h->mask;
		if (!h->used[j])
			return;
		size_t home = u64_hash(h->keys[j], h->mask);
		int movable = i <= j ? (home <= i || home > j) : (home <= i && home > j);
		if (movable) {
			h->keys[i] = h->keys[j];
			h->vals[i] = h->vals[j];
			h->used[i] = 1;
			h->used[j] = 0;
			i = j;
		}
	}
}

/* Free gaps below `top` (the end of the highest live item) are kept three ways:
 * by start and by end (hash maps), to merge neighbours on free, and ordered by
 * (length, offset), for best fit. */
struct gap_sets {
	struct u64_map by_start; /* start -> length */
	struct u64_map by_end;	 /* end -> start */
	struct treap by_len;	 /* (length, offset) */
};

static int gap_add(struct gap_sets *g, uint64_t off, uint64_t len)
{
	int ret;

	if (!len)
		return 0;
	ret = u64_map_put(&g->by_start, off, len);
	if (!ret)
		ret = u64_map_put(&g->by_end, off + len, off);
	if (!ret)
		ret = treap_insert(&g->by_len, len, off);
	return ret;
}

static void gap_del(struct gap_sets *g, uint64_t off, uint64_t len)
{
	size_t i = u64_map_find(&g->by_start, off);

	if (i != SIZE_MAX)
		u64_map_del_slot(&g->by_start, i);
	i = u64_map_find(&g->by_end, off + len);
	if (i != SIZE_MAX)
		u64_map_del_slot(&g->by_end, i);
	treap_erase(&g->by_len, len, off);
}

int greedy_linear_scan(const struct plan_item *it, size_t m, uint64_t *off, uint64_t *arena_bytes)
{
	uint32_t *alloc_ord = NULL, *end_ord = NULL;
	struct gap_sets g;
	uint64_t top = 0, arena = 0;
	int ret = 0;

	treap_init(&g.by_len, 2);
	if (u64_map_init(&g.by_start) | u64_map_init(&g.by_end)) {
		ret = -ENOMEM;
		goto err_free;
	}
	alloc_ord = malloc(m * sizeof(*alloc_ord));
	end_ord = malloc(m * sizeof(*end_ord));
	if (!alloc_ord || !end_ord) {
		ret = -ENOMEM;
		goto err_free;
	}
	/* Items come sorted by start: allocate in that order; free by end time. */
	uint64_t *ends = malloc(m * sizeof(*ends) + 1);
	if (!ends) {
		ret = -ENOMEM;
		goto err_free;
	}
	for (size_t i = 0; i < m; i++) {
		alloc_ord[i] = end_ord[i] = (uint32_t)i;
		ends[i] = it[i].t_end;
	}
	ret = radix_sort_pairs(ends, end_ord, m);
	free(ends);
	if (ret)
		goto err_free;

	size_t fe = 0;
	for (size_t k = 0; k < m; k++) {
		uint32_t i = alloc_ord[k];
		/* Frees first at equal times: lifetimes are half-open. */
		while (fe < m && it[end_ord[fe]].t_end <= it[i].t_start) {
			uint32_t f = end_ord[fe++];
			uint64_t lo = off[f], hi = off[f] + it[f].size_bytes;
			size_t p = u64_map_find(&g.by_end, lo);
			if (p != SIZE_MAX) {
				uint64_t po = g.by_end.vals[p];
				gap_del(&g, po, lo - po);
				lo = po;
			}
			if (hi == top) {
				top = lo;
				continue;
			}
			size_t s = u64_map_find(&g.by_start, hi);
			if (s != SIZE_MAX) {
				uint64_t sl = g.by_start.vals[s];
				gap_del(&g, hi, sl);
				hi += sl;
			}
			ret = gap_add(&g, lo, hi - lo);
			if (ret)
				goto err_free;
		}

		uint64_t size = it[i].size_bytes, align = it[i].align_bytes;
		uint64_t place = UINT64_MAX;
		uint32_t u = treap_lower_bound(&g.by_len, size, 0);
		/* Alignment can make a long enough gap unusable; look a little further. */
		for (int tries = 0; u != TREAP_NIL && tries < 16; tries++) {
			uint64_t gl = g.by_len.nodes[u].key_a, go = g.by_len.nodes[u].key_b;
			uint64_t a = align_up(go, align);
			if (a != UINT64_MAX && a - go <= gl && gl - (a - go) >= size) {
				gap_del(&g, go, gl);
				ret = gap_add(&g, go, a - go);
				if (!ret)
					ret = gap_add(&g, a + size, go + gl - (a + size));
				if (ret)
					goto err_free;
				place = a;
				break;
			}
			u = treap_lower_bound(&g.by_len, gl, go + 1);
		}
		if (place == UINT64_MAX) {
			place = align_up(top, align);
			ret = gap_add(&g, top, place - top);
			if (ret)
				goto err_free;
			top = sat_add(place, size);
		}
		off[i] = place;
		if (sat_add(place, size) > arena)
			arena = sat_add(place, size);
	}
	*arena_bytes = arena;

err_free:
	u64_map_free(&g.by_start);
	u64_map_free(&g.by_end);
	treap_destroy(&g.by_len);
	free(alloc_ord);
	free(end_ord);
	return ret;
}

/* ---- ordered greedy with conflict enumeration ---- */

/* A max-segment-tree over the start-sorted items: leaf i holds a time (its end
 * while it is of interest, 0 otherwise), so that the items of interest that
 * overlap [s, e) are found in O((k + 1) log m). */
struct end_tree {
	uint64_t *node;
	size_t leaves;
	uint32_t *hits; /* output of end_tree_collect */
	size_t nhits, cap_hits;
};

static int end_tree_init(struct end_tree *t, size_t m)
{
	t->leaves = 1;
	while (t->leaves < m)
		t->leaves *= 2;
	t->node = calloc(2 * t->leaves, sizeof(*t->node));
	t->cap_hits = 64;
	t->nhits = 0;
	t->hits = malloc(t->cap_hits * sizeof(*t->hits));
	return t->node && t->hits ? 0 : -ENOMEM;
}

static void end_tree_free(struct end_tree *t)
{
	free(t->node);
	free(t->hits);
}

static void end_tree_set(struct end_tree *t, size_t i, uint64_t v)
{
	size_t x = t->leaves + i;

	t->node[x] = v;
	for (x >>= 1; x; x >>= 1) {
		uint64_t a = t->node[2 * x], b = t->node[2 * x + 1];
		uint64_t mx = a > b ? a : b;
		if (t->node[x] == mx)
			break;
		t->node[x] = mx;
	}
}

/* Collects into t->hits the items j with t_start < e whose leaf is above s. */
static int end_tree_collect(struct end_tree *t, const struct plan_item *it, size_t m, uint64_t s,
			    uint64_t e)
{
	size_t stack_node[130], stack_first[130], stack_width[130], sp = 0;
	size_t lo = 0, hi = m;

	/* Items are sorted by start: those starting before e are a prefix [0, q). */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (it[mid].t_start < e)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t q = lo;
	t->nhits = 0;
	stack_node[sp] = 1;
	stack_first[sp] = 0;
	stack_width[sp++] = t->leaves;
	while (sp) {
		sp--;
		size_t node = stack_node[sp], first = stack_first[sp], width = stack_width[sp];
		if (t->node[node] <= s || first >= q)
			continue;
		if (width == 1) {
			if (t->nhits == t->cap_hits) {
				uint32_t *nh = realloc(t->hits, 2 * t->cap_hits * sizeof(*nh));
				if (!nh)
					return -ENOMEM;
				t->hits = nh;
				t->cap_hits *= 2;
			}
			t->hits[t->nhits++] = (uint32_t)first;
			continue;
		}
		stack_node[sp] = 2 * node + 1;
		stack_first[sp] = first + width / 2;
		stack_width[sp++] = width / 2;
		stack_node[sp] = 2 * node;
		stack_first[sp] = first;
		stack_width[sp++] = width / 2;
	}
	return 0;
}

struct placed_span {
	uint64_t lo, hi;
};

static int cmp_span(const void *pa, const void *pb)
{
	const struct placed_span *a = pa, *b = pb;

	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	return a->hi < b->hi ? -1 : a->hi > b->hi;
}

int greedy_place(const struct plan_item *it, size_t m, const uint32_t *order, enum greedy_fit fit,
		 double deadline_s, uint64_t *off, uint64_t *arena_bytes)
{
	size_t span_cap = 64;
	uint64_t arena = 0;
	struct placed_span *spans = NULL;
	struct end_tree tree;
	int ret;

	ret = end_tree_init(&tree, m);
	spans = malloc(span_cap * sizeof(*spans));
	if (ret || !spans) {
		ret = -ENOMEM;
		goto err_free;
	}

	for (size_t k = 0; k < m; k++) {
		uint32_t i = order[k];
		uint64_t s = it[i].t_start, e = it[i].t_end;

		if (deadline_s > 0 && !(k & 63) && planner_now_s() > deadline_s) {
			ret = -ETIMEDOUT;
			goto err_free;
		}
		/* Placed items have their end in the tree, unplaced ones 0 (ends are > 0). */
		ret = end_tree_collect(&tree, it, m, s, e);
		if (ret)
			goto err_free;
		if (tree.nhits > span_cap) {
			span_cap = tree.nhits;
			free(spans);
			spans = malloc(span_cap * sizeof(*spans));
			if (!spans) {
				ret = -ENOMEM;
				goto err_free;
			}
		}
		for (size_t j = 0; j < tree.nhits; j++) {
			spans[j].lo = off[tree.hits[j]];
			spans[j].hi = off[tree.hits[j]] + it[tree.hits[j]].size_bytes;
		}
		size_t nspan = tree.nhits;
		qsort(spans, nspan, sizeof(*spans), cmp_span);
		uint64_t size = it[i].size_bytes, align = it[i].align_bytes;
		uint64_t cur = 0, best = UINT64_MAX, best_len = UINT64_MAX;
		for (size_t j = 0; j < nspan; j++) {
			if (spans[j].lo > cur) {
				uint64_t a = align_up(cur, align);
				if (a < spans[j].lo && spans[j].lo - a >= size) {
					uint64_t len = spans[j].lo - cur;
					if (len < best_len) {
						best_len = len;
						best = a;
					}
					if (fit == GREEDY_FIRST_FIT)
						break;
				}
			}
			if (spans[j].hi > cur)
				cur = spans[j].hi;
		}
		if (best == UINT64_MAX)
			best = align_up(cur, align);
		off[i] = best;
		if (sat_add(best, size) > arena)
			arena = sat_add(best, size);
		end_tree_set(&tree, i, e);
	}
	*arena_bytes = arena;

err_free:
	end_tree_free(&tree);
	free(spans);
	return ret;
}

/* ---- orders ---- */

static uint64_t lifetime(const struct plan_item *x)
{
	return x->t_end - x->t_start;
}

static int cmp_u64(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;

	return a < b ? -1 : a > b;
}

/* The index of time t, which is one of times[0..nt) (sorted, distinct). */
static size_t section_of(const uint64_t *times, size_t nt, uint64_t t)
{
	return (size_t)((const uint64_t *)bsearch(&t, times, nt, sizeof(*times), cmp_u64) - times);
}

/* For each item, the highest load (live bytes) during its lifetime. */
static int peak_load_keys(const struct plan_item *it, size_t m, uint64_t *key)
{
	uint64_t *times = NULL, *tree = NULL;
	size_t nt = 0, leaves = 1;
	int ret = 0;

	times = malloc(2 * m * sizeof(*times));
	if (!times)
		return -ENOMEM;
	for (size_t i = 0; i < m; i++) {
		times[nt++] = it[i].t_start;
		times[nt++] = it[i].t_end;
	}
	qsort(times, nt, sizeof(*times), cmp_u64);
	size_t u = 0;
	for (size_t i = 0; i < nt; i++)
		if (!u || times[u - 1] != times[i])
			times[u++] = times[i];
	nt = u;
	while (leaves < nt)
		leaves *= 2;
	tree = calloc(2 * leaves, sizeof(*tree));
	if (!tree) {
		ret = -ENOMEM;
		goto err_free;
	}
	/* Difference array over sections [times[k], times[k+1]). */
	for (size_t i = 0; i < m; i++) {
		size_t a = section_of(times, nt, it[i].t_start);
		size_t b = section_of(times, nt, it[i].t_end);
		tree[leaves + a] += it[i].size_bytes;
		tree[leaves + b] -= it[i].size_bytes;
	}
	uint64_t run = 0;
	for (size_t k = 0; k < leaves; k++) {
		run += tree[leaves + k];
		tree[leaves + k] = run;
	}
	for (size_t k = leaves - 1; k >= 1; k--)
		tree[k] = tree[2 * k] > tree[2 * k + 1] ? tree[2 * k] : tree[2 * k + 1];
	for (size_t i = 0; i < m; i++) {
		size_t a = section_of(times, nt, it[i].t_start);
		size_t b = section_of(times, nt, it[i].t_end);
		uint64_t best = 0;
		for (size_t l = a + leaves, r = b + leaves; l < r; l >>= 1, r >>= 1) {
			if (l & 1) {
				if (tree[l] > best)
					best = tree[l];
				l++;
			}
			if (r & 1) {
				r--;
				if (tree[r] > best)
					best = tree[r];
			}
		}
		key[i] = best;
	}

err_free:
	free(times);
	free(tree);
	return ret;
}

/* One stable pass of the order's sort: by keys[order[k]] computed by which,
 * ascending (descending keys are complemented). */
enum sort_key { KEY_SIZE, KEY_LIFETIME, KEY_START, KEY_AREA_LOW, KEY_AREA_HIGH, KEY_PEAK };

static int sort_pass(const struct plan_item *it, const uint64_t *peak, size_t m, uint32_t *order,
		     uint64_t *keys, enum sort_key which)
{
	for (size_t k = 0; k < m; k++) {
		const struct plan_item *x = &it[order[k]];
		unsigned __int128 area = (unsigned __int128)x->size_bytes * lifetime(x);
		switch (which) {
		case KEY_SIZE:
			keys[k] = ~x->size_bytes;
			break;
		case KEY_LIFETIME:
			keys[k] = ~lifetime(x);
			break;
		case KEY_START:
			keys[k] = x->t_start;
			break;
		case KEY_AREA_LOW:
			keys[k] = ~(uint64_t)area;
			break;
		case KEY_AREA_HIGH:
			keys[k] = ~(uint64_t)(area >> 64);
			break;
		case KEY_PEAK:
			keys[k] = ~peak[order[k]];
			break;
		}
	}
	return radix_sort_pairs(keys, order, m);
}

/* The orders are stable radix sorts, least significant key first, from the
 * input order (the last tie-break): qsort's callbacks cost as much as the
 * heuristics that use the order. */
int greedy_make_order(const struct plan_item *it, size_t m, enum greedy_order kind, uint32_t *order)
{
	static const enum sort_key passes[GREEDY_ORDER_COUNT][4] = {
	    [GREEDY_BY_SIZE] = {KEY_LIFETIME, KEY_SIZE},
	    [GREEDY_BY_AREA] = {KEY_SIZE, KEY_AREA_LOW, KEY_AREA_HIGH},
	    [GREEDY_BY_LIFETIME] = {KEY_SIZE, KEY_LIFETIME},
	    [GREEDY_BY_START] = {KEY_SIZE, KEY_START},
	    [GREEDY_BY_CONFLICT] = {KEY_SIZE, KEY_PEAK},
	};
	static const unsigned npasses[GREEDY_ORDER_COUNT] = {2, 3, 2, 2, 2};
	uint64_t *keys = malloc(m * sizeof(*keys) + 1), *peak = NULL;
	int ret = keys ? 0 : -ENOMEM;

	if (!ret && kind == GREEDY_BY_CONFLICT) {
		peak = malloc(m * sizeof(*peak) + 1);
		ret = peak ? peak_load_keys(it, m, peak) : -ENOMEM;
	}
	for (size_t i = 0; i < m; i++)
		order[i] = (uint32_t)i;
	for (unsigned k = 0; !ret && k < npasses[kind]; k++)
		ret = sort_pass(it, peak, m, order, keys, passes[kind][k]);
	free(keys);
	free(peak);
	return ret;
}
