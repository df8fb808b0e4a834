/* Lowest offset first over a k-d tree (see planner_lowest.h).
 *
 * Every unplaced item has a key: the highest top of the placed items it overlaps
 * in time (the offset it would get, before alignment). The items are points
 * (start, end) in a k-d tree; the items that overlap a placed one, [s, e), are
 * exactly the points with start < e and end > s, a quadrant, so placing an item
 * is one range update "key = max(key, top)" on a quadrant. Each node keeps the
 * smallest key below it, the next larger one, the largest, and the smallest rank
 * among the points that have the smallest key and among all. An update that
 * covers a node and falls between its two smallest keys only moves the
 * smallest; one at or above its largest makes all its keys equal (either is a
 * lazy tag that needs no storage of its own: children below their parent's
 * smallest key are raised to it when visited); otherwise it goes down (the
 * "segment tree beats" argument bounds how often). Without the second case, a
 * recorded churn's 67,000 blocks took 1.7 billion instructions, 1.2 with it:
 * after a few placements the blocks alive at a time have as many keys as
 * blocks, all below the next top. The next
 * item to place is then read at the root. Nothing here depends on the tree's
 * shape: the result is the same as with a heap and the list of overlapping
 * pairs, which is what this replaces. */
#include "planner_lowest.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Points per leaf: scanned linearly, which is cheaper than a deeper tree. */
#define LEAF_POINTS 8
/* The key of a placed point, and "none" for a node's smallest keys. */
#define KEY_NONE UINT64_MAX
/* Deeper than any tree of 2^32 points. */
#define MAX_DEPTH 64

/* Times are ranks among all the part's start and end times (an infinite end
 * is UINT32_MAX): the comparisons are the same, and the tree is smaller. */
struct kd_point {
	uint64_t key;
	uint32_t s, e, rank, item;
};

struct kd_node {
	uint64_t min1, min2; /* smallest key of an unplaced point below, next larger */
	uint64_t max;	     /* largest key of an unplaced point below */
	uint32_t s_min, s_max, e_min, e_max; /* box of the unplaced points below */
	uint32_t rank1;			     /* smallest rank among points with key min1 */
	uint32_t rank_all;		     /* smallest rank among all of them */
	uint32_t right;			     /* the right child; the left one is next */
};

/* Nodes are stored in pre-order (a node, its left subtree, its right subtree),
 * so that a subtree is one stretch of memory: an update walks a few subtrees
 * deep, and on traces of millions of blocks cache misses are most of its cost. */
struct kd_tree {
	struct kd_point *pt;
	struct kd_node *node;
	size_t m;
};

static bool is_leaf(size_t lo, size_t hi)
{
	return hi - lo <= LEAF_POINTS;
}

/* Moves the k-th smallest of a[0..n) to a[k] (quickselect, median-of-three
 * pivot; the values are distinct). */
static void select_kth(uint64_t *a, size_t n, size_t k)
{
	size_t lo = 0, hi = n;

	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2, last = hi - 1, store = lo;
		uint64_t t;
#define SWAP(i, j) (t = a[i], a[i] = a[j], a[j] = t)
		if (a[mid] < a[lo])
			SWAP(mid, lo);
		if (a[last] < a[lo])
			SWAP(last, lo);
		if (a[mid] < a[last])
			SWAP(mid, last);
		/* a[last] is now the median of the three: the pivot. */
		for (size_t i = lo; i < last; i++)
			if (a[i] < a[last]) {
				SWAP(i, store);
				store++;
			}
		SWAP(store, last);
#undef SWAP
		if (k == store)
			return;
		if (k < store)
			hi = store;
		else
			lo = store + 1;
	}
}

/* A node about to be summed up from its points: no point yet. */
static void node_empty(struct kd_node *nd)
{
	nd->min1 = nd->min2 = KEY_NONE;
	nd->max = 0;
	nd->rank1 = nd->rank_all = nd->s_min = nd->e_min = UINT32_MAX;
	nd->s_max = nd->e_max = 0;
}

/* Adds an unplaced point with key k to a leaf's summary. */
static inline void node_add(struct kd_node *nd, const struct kd_point *p, uint64_t k)
{
	if (p->s < nd->s_min)
		nd->s_min = p->s;
	if (p->s > nd->s_max)
		nd->s_max = p->s;
	if (p->e < nd->e_min)
		nd->e_min = p->e;
	if (p->e > nd->e_max)
		nd->e_max = p->e;
	if (k > nd->max)
		nd->max = k;
	if (p->rank < nd->rank_all)
		nd->rank_all = p->rank;
	if (k < nd->min1) {
		nd->min2 = nd->min1;
		nd->min1 = k;
		nd->rank1 = p->rank;
	} else if (k == nd->min1) {
		if (p->rank < nd->rank1)
			nd->rank1 = p->rank;
	} else if (k < nd->min2) {
		nd->min2 = k;
	}
}

static void leaf_pull(struct kd_tree *t, size_t x, size_t lo, size_t hi)
{
	struct kd_node nd;

	node_empty(&nd);
	for (size_t i = lo; i < hi; i++)
		if (t->pt[i].key != KEY_NONE)
			node_add(&nd, &t->pt[i], t->pt[i].key);
	nd.right = t->node[x].right;
	t->node[x] = nd;
}

/* Raises a leaf's points that are below its smallest key (it was raised as a
 * whole) to it. */
static void leaf_push(struct kd_tree *t, size_t x, size_t lo, size_t hi)
{
	uint64_t m1 = t->node[x].min1;

	for (size_t i = lo; i < hi; i++)
		if (t->pt[i].key < m1)
			t->pt[i].key = m1;
}

/* Raises a child's keys below m1, its parent's smallest, to m1. Either m1 is
 * below the child's next larger key (only its smallest move), or the parent
 * was raised past its largest key, and so was the child: all its keys are m1. */
static void raise_child(struct kd_node *child, uint64_t m1)
{
	if (child->min1 >= m1)
		return;
	if (child->min2 <= m1) {
		child->min2 = KEY_NONE;
		child->rank1 = child->rank_all;
	}
	child->min1 = m1;
	if (child->max < m1)
		child->max = m1;
}

static void push_down(struct kd_tree *t, size_t x)
{
	uint64_t m1 = t->node[x].min1;

	raise_child(&t->node[x + 1], m1);
	raise_child(&t->node[t->node[x].right], m1);
}

/* The second smallest distinct key of two nodes, each with its smallest below
 * its next larger (or both KEY_NONE). */
static inline uint64_t second_smallest(uint64_t a1, uint64_t a2, uint64_t b1, uint64_t b2)
{
	if (a1 == b1)
		return a2 < b2 ? a2 : b2;
	if (a1 < b1)
		return a2 < b1 ? a2 : b1;
	return b2 < a1 ? b2 : a1;
}

/* pull for a node whose points stayed unplaced: only the keys moved, the box
 * and the smallest rank of all did not. Most nodes an update visits are such
 * (a recorded churn's 67,165 blocks: 1.46 billion instructions in all with
 * pull everywhere and a loop for the second smallest key, 1.19 with these). */
static void pull_keys(struct kd_tree *t, size_t x)
{
	const struct kd_node *a = &t->node[x + 1], *b = &t->node[t->node[x].right];
	struct kd_node *nd = &t->node[x];
	const uint64_t m1 = a->min1 < b->min1 ? a->min1 : b->min1,
		       m2 = second_smallest(a->min1, a->min2, b->min1, b->min2);
	nd->min1 = m1;
	nd->min2 = m2;
	nd->max = a->max > b->max ? a->max : b->max;
	nd->rank1 = UINT32_MAX;
	if (a->min1 == m1)
		nd->rank1 = a->rank1;
	if (b->min1 == m1 && b->rank1 < nd->rank1)
		nd->rank1 = b->rank1;
}

static void pull(struct kd_tree *t, size_t x)
{
	const struct kd_node *a = &t->node[x + 1], *b = &t->node[t->node[x].right];
	struct kd_node *nd = &t->node[x];

	pull_keys(t, x);
	nd->rank_all = a->rank_all < b->rank_all ? a->rank_all : b->rank_all;
	nd->s_min = a->s_min < b->s_min ? a->s_min : b->s_min;
	nd->s_max = a->s_max > b->s_max ? a->s_max : b->s_max;
	nd->e_min = a->e_min < b->e_min ? a->e_min : b->e_min;
	nd->e_max = a->e_max > b->e_max ? a->e_max : b->e_max;
}

/* Builds node x over pt[lo..hi), which is sorted by (start, item), as every
 * range stays: a split by start is at the middle, and a split by end moves the
 * points below the median end to the left half in a stable pass. The axis is
 * the one along which the range is longer (ends clamped to t_cap: never-freed
 * blocks have an infinite end). key and spare have room for hi - lo entries. */
static size_t build(struct kd_tree *t, size_t x, size_t lo, size_t hi, uint32_t t_cap,
		    uint64_t *key, struct kd_point *spare)
{
	uint32_t e_min = UINT32_MAX, e_max = 0;
	size_t mid = lo + (hi - lo) / 2;

	if (is_leaf(lo, hi)) {
		leaf_pull(t, x, lo, hi);
		return x + 1;
	}
	for (size_t i = lo; i < hi; i++) {
		uint32_t e = t->pt[i].e < t_cap ? t->pt[i].e : t_cap;
		if (e < e_min)
			e_min = e;
		if (e > e_max)
			e_max = e;
	}
	if (e_max - e_min > t->pt[hi - 1].s - t->pt[lo].s) {
		for (size_t i = lo; i < hi; i++)
			key[i - lo] = (uint64_t)t->pt[i].e << 32 | t->pt[i].item;
		select_kth(key, hi - lo, mid - lo);
		uint64_t median = key[mid - lo];
		size_t l = lo, r = 0;
		for (size_t i = lo; i < hi; i++) {
			if (((uint64_t)t->pt[i].e << 32 | t->pt[i].item) < median)
				t->pt[l++] = t->pt[i];
			else
				spare[r++] = t->pt[i];
		}
		memcpy(&t->pt[mid], spare, r * sizeof(*spare));
	}
	size_t right = build(t, x + 1, lo, mid, t_cap, key, spare);
	t->node[x].right = (uint32_t)right;
	size_t end = build(t, right, mid, hi, t_cap, key, spare);
	pull(t, x);
	return end;
}

/* leaf_push, the raise below and leaf_pull in one pass over a leaf's points:
 * each point takes the leaf's smallest key if below it, then c if in the
 * quadrant (or KEY_NONE if it is the one placed), and the leaf's keys and box
 * are summed up as they go. Leaves are most of an update's cost. */
static void leaf_raise(struct kd_tree *t, size_t x, size_t lo, size_t hi, uint32_t before,
		       uint32_t after, uint64_t c, size_t place)
{
	const uint64_t tag = t->node[x].min1;
	struct kd_node nd;

	node_empty(&nd);
	for (size_t i = lo; i < hi; i++) {
		struct kd_point *p = &t->pt[i];
		uint64_t k = p->key;
		if (k == KEY_NONE)
			continue;
		if (k < tag)
			k = tag;
		if (i == place)
			k = KEY_NONE;
		else if (k < c && p->s < before && p->e > after)
			k = c;
		p->key = k;
		if (k != KEY_NONE)
			node_add(&nd, p, k);
	}
	nd.right = t->node[x].right;
	t->node[x] = nd;
}

/* key = max(key, c) for every unplaced point with s < before and e > after; the
 * point at position place (SIZE_MAX: none) is marked placed on the way, which
 * saves bringing its path up to date twice. */
static void raise_quadrant(struct kd_tree *t, size_t x, size_t lo, size_t hi, uint32_t before,
			   uint32_t after, uint64_t c, size_t place)
{
	struct kd_node *nd = &t->node[x];
	bool on_path = place >= lo && place < hi;

	if (!on_path) {
		if (c <= nd->min1 || nd->s_min >= before || nd->e_max <= after)
			return;
		/* Covered whole: keys below c become c. If that moves only the
		 * smallest, or all of them (c is at least the largest), the node
		 * says it alone, and its children learn it when next visited. */
		if (nd->s_max < before && nd->e_min > after && (c < nd->min2 || c >= nd->max)) {
			raise_child(nd, c);
			return;
		}
	}
	if (is_leaf(lo, hi)) {
		leaf_raise(t, x, lo, hi, before, after, c, place);
		return;
	}
	size_t mid = lo + (hi - lo) / 2;
	push_down(t, x);
	raise_quadrant(t, x + 1, lo, mid, before, after, c, place);
	raise_quadrant(t, nd->right, mid, hi, before, after, c, place);
	if (on_path)
		pull(t, x);
	else
		pull_keys(t, x);
}

/* The way down to the point with the root's (smallest key, smallest rank). */
struct min_path {
	size_t node[MAX_DEPTH], depth;
	size_t leaf, lo, hi;
};

/* Finds that point, pushing the tags on the way down to it; NULL if it is not
 * there (a bug: the caller gives up rather than abort the program it runs in). */
static struct kd_point *find_min(struct kd_tree *t, struct min_path *mp)
{
	size_t x = 0, lo = 0, hi = t->m;
	const uint64_t m1 = t->node[0].min1;
	const uint32_t r1 = t->node[0].rank1;

	mp->depth = 0;
	while (!is_leaf(lo, hi)) {
		size_t mid = lo + (hi - lo) / 2;
		mp->node[mp->depth++] = x;
		push_down(t, x);
		const struct kd_node *left = &t->node[x + 1];
		if (left->min1 == m1 && left->rank1 == r1) {
			x = x + 1;
			hi = mid;
		} else {
			x = t->node[x].right;
			lo = mid;
		}
	}
	mp->leaf = x;
	mp->lo = lo;
	mp->hi = hi;
	leaf_push(t, x, lo, hi);
	for (size_t i = lo; i < hi; i++)
		if (t->pt[i].key == m1 && t->pt[i].rank == r1)
			return &t->pt[i];
	return NULL; /* the root's minimum is not below it: a broken invariant */
}

/* Sets the key of p, found by find_min, and brings the nodes above it up to
 * date. */
static void set_key(struct kd_tree *t, const struct min_path *mp, struct kd_point *p,
		    uint64_t key)
{
	p->key = key;
	leaf_pull(t, mp->leaf, mp->lo, mp->hi);
	for (size_t d = mp->depth; d > 0; d--)
		pull(t, mp->node[d - 1]);
}

static uint64_t align_up(uint64_t x, uint64_t align)
{
	uint64_t r = x & (align - 1);

	if (!r)
		return x;
	return x > UINT64_MAX - (align - r) ? UINT64_MAX : x + (align - r);
}

/* Fills in the points' time ranks: it[] is sorted by start, so only the ends
 * need sorting. Returns the rank past the last finite time, or 0 on -ENOMEM. */
static uint32_t rank_times(const struct plan_item *it, size_t m, struct kd_point *pt)
{
	uint64_t *ends = malloc(m * sizeof(*ends));
	uint32_t *who = malloc(m * sizeof(*who));
	uint32_t r = 0;
	uint64_t last = 0;
	size_t finite = 0;

	if (!ends || !who)
		goto out;
	for (size_t i = 0; i < m; i++) {
		pt[i].e = UINT32_MAX;
		if (it[i].t_end != UINT64_MAX) {
			ends[finite] = it[i].t_end;
			who[finite++] = (uint32_t)i;
		}
	}
	if (radix_sort_pairs(ends, who, finite))
		goto out;
	for (size_t i = 0, j = 0; i < m || j < finite;) {
		bool start = i < m && (j == finite || it[i].t_start <= ends[j]);
		uint64_t v = start ? it[i].t_start : ends[j];
		if ((i || j) && v != last)
			r++;
		last = v;
		if (start)
			pt[i++].s = r;
		else
			pt[who[j++]].e = r;
	}
	r++;
out:
	free(ends);
	free(who);
	return ends && who ? r : 0;
}

int lowest_first_place(const struct plan_item *it, size_t m, const uint32_t *order,
		       double deadline_s, uint64_t *off, uint64_t *arena_bytes)
{
	struct kd_tree t = {.m = m};
	size_t leaves = 1, placed = 0;
	uint64_t arena = 0;
	uint32_t t_cap;
	int ret = -ENOMEM;

	*arena_bytes = 0;
	if (!m)
		return 0;
	if (m >= UINT32_MAX / 2)
		return -ENOMEM; /* two time ranks per item must fit */
	while (leaves * LEAF_POINTS < m)
		leaves *= 2;
	t.pt = malloc(m * sizeof(*t.pt));
	t.node = malloc((2 * leaves + 2) * sizeof(*t.node));
	if (!t.pt || !t.node)
		goto out;
	for (size_t i = 0; i < m; i++)
		t.pt[i] = (struct kd_point){.key = 0, .item = (uint32_t)i};
	for (size_t k = 0; k < m; k++)
		t.pt[order[k]].rank = (uint32_t)k;
	t_cap = rank_times(it, m, t.pt);
	uint64_t *split_keys = malloc(m * sizeof(*split_keys));
	struct kd_point *spare = malloc(m * sizeof(*spare));
	if (t_cap && split_keys && spare)
		build(&t, 0, 0, m, t_cap, split_keys, spare);
	free(split_keys);
	free(spare);
	if (!t_cap || !split_keys || !spare)
		goto out;

	while (t.node[0].min1 != KEY_NONE) {
		struct min_path mp;
		struct kd_point *p = find_min(&t, &mp);
		if (!p) {
			ret = -EFAULT;
			goto out;
		}
		const struct plan_item *b = &it[p->item];
		uint64_t key = p->key, aligned = align_up(key, b->align_bytes);

		/* The smallest key may not be aligned for its item: raise that item
		 * alone to its aligned offset and look again. */
		if (aligned != key && aligned != KEY_NONE) {
			set_key(&t, &mp, p, aligned);
			continue;
		}
		key = aligned; /* KEY_NONE if it overflowed: a plan too high to use */
		if (deadline_s > 0 && !(++placed & 63) && planner_now_s() > deadline_s) {
			ret = -ETIMEDOUT;
			goto out;
		}
		uint64_t top = key > UINT64_MAX - b->size_bytes ? UINT64_MAX : key + b->size_bytes;
		off[p->item] = key;
		if (top > arena)
			arena = top;
		raise_quadrant(&t, 0, 0, m, p->e, p->s, top == KEY_NONE ? KEY_NONE - 1 : top,
			       (size_t)(p - t.pt));
	}
	*arena_bytes = arena;
	ret = 0;
out:
	free(t.pt);
	free(t.node);
	return ret;
}
