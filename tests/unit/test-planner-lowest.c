/* Unit test of lowest offset first over a k-d tree (planner_lowest.c): on random
 * instances (equal times, never-freed blocks, alignments, any order), its
 * offsets must be exactly those of the plain definition, computed here in
 * O(m^2): repeatedly place the unplaced item whose aligned lowest offset on top
 * of the placed items it overlaps is smallest, ties to the earlier in order. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "planner_lowest.h"

struct rng {
	uint64_t s;
};

static uint64_t rnd(struct rng *r, uint64_t bound)
{
	r->s = r->s * 6364136223846793005ull + 1442695040888963407ull;
	return (r->s >> 17) % bound;
}

static uint64_t align_up(uint64_t x, uint64_t a)
{
	return (x + a - 1) / a * a;
}

static int overlap(const struct plan_item *a, const struct plan_item *b)
{
	return a->t_start < b->t_end && b->t_start < a->t_end;
}

static uint64_t reference(const struct plan_item *it, size_t m, const uint32_t *order,
			  uint64_t *off)
{
	char *placed = calloc(m, 1);
	uint32_t *rank = malloc(m * sizeof(*rank));
	uint64_t *top = calloc(m, sizeof(*top)); /* highest placed top it overlaps */
	uint64_t arena = 0;

	for (size_t k = 0; k < m; k++)
		rank[order[k]] = (uint32_t)k;
	for (size_t step = 0; step < m; step++) {
		size_t best = m;
		uint64_t best_key = 0;
		for (size_t i = 0; i < m; i++) {
			uint64_t key = align_up(top[i], it[i].align_bytes);
			if (!placed[i] && (best == m || key < best_key ||
					   (key == best_key && rank[i] < rank[best]))) {
				best = i;
				best_key = key;
			}
		}
		placed[best] = 1;
		off[best] = best_key;
		uint64_t t = best_key + it[best].size_bytes;
		if (t > arena)
			arena = t;
		for (size_t i = 0; i < m; i++)
			if (!placed[i] && overlap(&it[i], &it[best]) && t > top[i])
				top[i] = t;
	}
	free(placed);
	free(rank);
	free(top);
	return arena;
}

static int by_start(const void *pa, const void *pb)
{
	const struct plan_item *a = pa, *b = pb;

	if (a->t_start != b->t_start)
		return a->t_start < b->t_start ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* m items sorted by start, as the planner gives them; kind varies the shape. */
static void make_items(struct rng *r, struct plan_item *it, size_t m, int kind)
{
	uint64_t horizon = kind == 0 ? 8 : 4 * m;

	for (size_t i = 0; i < m; i++) {
		struct plan_item *x = &it[i];
		x->t_start = rnd(r, horizon);
		x->t_end = x->t_start + 1 + rnd(r, kind == 2 ? 3 : horizon / 2);
		/* Blocks that live to the end, as on a recorded trace. */
		if (rnd(r, 8) == 0)
			x->t_end = UINT64_MAX;
		x->size_bytes = kind == 1 ? 16 * (1 + rnd(r, 4)) : 1 + rnd(r, 300);
		x->align_bytes = rnd(r, 3) ? 1 : 1ull << rnd(r, 7);
		x->seq = i;
	}
	qsort(it, m, sizeof(*it), by_start);
}

static void test_matches_reference(void)
{
	struct rng r = {12345};

	for (int round = 0; round < 400; round++) {
		size_t m = 1 + rnd(&r, round < 300 ? 40 : 400);
		struct plan_item *it = malloc(m * sizeof(*it));
		uint32_t *order = malloc(m * sizeof(*order));
		uint64_t *off = malloc(m * sizeof(*off)), *want = malloc(m * sizeof(*want));
		uint64_t arena, want_arena;

		make_items(&r, it, m, round % 3);
		for (size_t k = 0; k < m; k++)
			order[k] = (uint32_t)k;
		for (size_t k = m; k > 1; k--) { /* any order: a shuffle */
			size_t j = rnd(&r, k);
			uint32_t t = order[k - 1];
			order[k - 1] = order[j];
			order[j] = t;
		}
		CHECK_EQ_U64(lowest_first_place(it, m, order, 0, off, &arena), 0);
		want_arena = reference(it, m, order, want);
		CHECK_EQ_U64(arena, want_arena);
		for (size_t i = 0; i < m; i++)
			CHECK_EQ_U64(off[i], want[i]);
		free(it);
		free(order);
		free(off);
		free(want);
	}
}

/* Many blocks that all live to the end (every pair overlaps) stack exactly. */
static void test_stack(void)
{
	enum { M = 20000 };
	struct plan_item *it = malloc(M * sizeof(*it));
	uint32_t *order = malloc(M * sizeof(*order));
	uint64_t *off = malloc(M * sizeof(*off)), arena, sum = 0;

	for (size_t i = 0; i < M; i++) {
		it[i] = (struct plan_item){16 * (1 + i % 5), i, UINT64_MAX, 16, i};
		order[i] = (uint32_t)(M - 1 - i);
		sum += it[i].size_bytes;
	}
	CHECK_EQ_U64(lowest_first_place(it, M, order, 0, off, &arena), 0);
	CHECK_EQ_U64(arena, sum);
	/* All start at 0 on top of each other: the order decides. */
	for (size_t k = 1; k < M; k++)
		CHECK(off[order[k]] == off[order[k - 1]] + it[order[k - 1]].size_bytes);
	free(it);
	free(order);
	free(off);
}

static void test_deadline(void)
{
	enum { M = 1000 };
	struct plan_item it[M];
	uint32_t order[M];
	uint64_t off[M], arena;

	for (size_t i = 0; i < M; i++) {
		it[i] = (struct plan_item){8, i, i + 10, 1, i};
		order[i] = (uint32_t)i;
	}
	CHECK(lowest_first_place(it, M, order, 1e-9, off, &arena) == -ETIMEDOUT);
	CHECK_EQ_U64(lowest_first_place(it, 0, order, 0, off, &arena), 0);
	CHECK_EQ_U64(arena, 0);
}

int main(void)
{
	test_matches_reference();
	test_stack();
	test_deadline();
	return 0;
}
