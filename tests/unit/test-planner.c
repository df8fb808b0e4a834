/* Unit test of the planner. Every plan is checked here by brute force (no shared
 * code with the planner or the checker): alignment, and no two blocks that share
 * a moment share a byte. Instances whose optimum is known by construction (a
 * rectangle of time x space cut into pieces) must be solved to that optimum. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "planner.h"

struct rng {
	uint64_t s;
};

static uint64_t rnd(struct rng *r, uint64_t bound)
{
	r->s = r->s * 6364136223846793005ull + 1442695040888963407ull;
	return (r->s >> 17) % bound;
}

/* O(n^2) check; returns the arena. */
static uint64_t brute_check(const struct block *b, size_t n)
{
	uint64_t arena = 0;

	for (size_t i = 0; i < n; i++) {
		CHECK(b[i].offset_bytes % b[i].align_bytes == 0);
		if (b[i].size_bytes && b[i].offset_bytes + b[i].size_bytes > arena)
			arena = b[i].offset_bytes + b[i].size_bytes;
		for (size_t j = i + 1; j < n; j++) {
			if (!b[i].size_bytes || !b[j].size_bytes)
				continue;
			if (b[i].t_start < b[j].t_end && b[j].t_start < b[i].t_end) {
				int disjoint =
				    b[i].offset_bytes + b[i].size_bytes <= b[j].offset_bytes ||
				    b[j].offset_bytes + b[j].size_bytes <= b[i].offset_bytes;
				if (!disjoint) {
					fprintf(stderr, "blocks %zu and %zu overlap\n", i, j);
					exit(1);
				}
			}
		}
	}
	return arena;
}

static struct planner_result solve(struct block *b, size_t n, double limit_s)
{
	struct planner_options opt = {.time_limit_s = limit_s};
	struct planner_result res;
	uint64_t lb;

	CHECK_EQ_U64(planner_solve(b, n, &opt, &res), 0);
	CHECK_EQ_U64(brute_check(b, n), res.arena_bytes);
	CHECK_EQ_U64(planner_lower_bound(b, n, &lb), 0);
	CHECK_EQ_U64(lb, res.lower_bound_bytes);
	CHECK(res.arena_bytes >= res.lower_bound_bytes);
	CHECK_EQ_U64(res.proven_optimal, res.arena_bytes == res.lower_bound_bytes);
	return res;
}

#define B(size, start, end)                                                                        \
	{                                                                                          \
		(size), (start), (end), 0, 1                                                       \
	}

static void test_lower_bound_examples(void)
{
	/* MiniMalloc's README example (input.12.csv): optimum 12. */
	struct block b[] = {B(4, 0, 3), B(4, 3, 9), B(4, 0, 9), B(4, 9, 21), B(4, 0, 21)};
	uint64_t lb;
	CHECK_EQ_U64(planner_lower_bound(b, 5, &lb), 0);
	CHECK_EQ_U64(lb, 12);
	struct planner_result r = solve(b, 5, 0);
	CHECK_EQ_U64(r.arena_bytes, 12);

	/* Frees before allocations at equal times: a chain of touching blocks. */
	struct block c[] = {B(10, 0, 5), B(20, 5, 6), B(30, 6, 100), B(5, 6, 7)};
	CHECK_EQ_U64(planner_lower_bound(c, 4, &lb), 0);
	CHECK_EQ_U64(lb, 35);
	/* Zero-size blocks and empty input. */
	struct block z[] = {B(0, 0, 10), B(0, 5, 5)};
	CHECK_EQ_U64(planner_lower_bound(z, 2, &lb), 0);
	CHECK_EQ_U64(lb, 0);
	CHECK_EQ_U64(planner_lower_bound(z, 0, &lb), 0);
	CHECK_EQ_U64(lb, 0);
	r = solve(z, 2, 0);
	CHECK_EQ_U64(r.arena_bytes, 0);
	/* Infinity ends never free. */
	struct block inf[] = {B(7, 0, BLOCK_T_INFINITY), B(3, 1u << 30, BLOCK_T_INFINITY),
			      B(100, 5, 6)};
	CHECK_EQ_U64(planner_lower_bound(inf, 3, &lb), 0);
	CHECK_EQ_U64(lb, 107);
	r = solve(inf, 3, 0.5);
	CHECK_EQ_U64(r.arena_bytes, 107);
	/* Times past 2^63, which leave no bit for the kind of event in the radix
	 * sort's keys, are swept all the same. */
	const uint64_t far = UINT64_C(1) << 63;
	struct block high[] = {B(8, far, far + 10), B(16, far + 10, far + 20),
			       B(4, far + 5, BLOCK_T_INFINITY), B(2, 1, 2)};
	CHECK_EQ_U64(planner_lower_bound(high, 4, &lb), 0);
	CHECK_EQ_U64(lb, 20);
}

static void test_bad_input(void)
{
	struct block b[] = {B(4, 5, 5)};
	CHECK(planner_solve(b, 1, NULL, NULL) == -EINVAL);
	struct block c[] = {{4, 0, 5, 0, 6}};
	CHECK(planner_solve(c, 1, NULL, NULL) == -EINVAL);
	/* An empty lifetime is fine for a zero-size block. */
	struct block d[] = {B(0, 5, 5), B(4, 0, 1)};
	CHECK_EQ_U64(planner_solve(d, 2, NULL, NULL), 0);
	CHECK_EQ_U64(d[1].offset_bytes, 0);
}

static void test_zero_size_and_alignment(void)
{
	struct rng r = {7};
	struct block b[300];
	for (size_t i = 0; i < 300; i++) {
		b[i].t_start = rnd(&r, 1000);
		b[i].t_end = b[i].t_start + 1 + rnd(&r, 200);
		b[i].size_bytes = i % 7 == 0 ? 0 : 1 + rnd(&r, 5000);
		b[i].align_bytes = 1ull << rnd(&r, 13);
		b[i].offset_bytes = 12345;
	}
	for (int limit = 0; limit < 2; limit++) {
		solve(b, 300, limit * 0.3);
		for (size_t i = 0; i < 300; i += 7)
			CHECK_EQ_U64(b[i].offset_bytes, 0);
	}
}

static void test_huge_sizes(void)
{
	struct block b[] = {B(1ull << 41, 0, 10),
			    B(1ull << 40, 5, 20),
			    B(3ull << 40, 10, 30),
			    {1ull << 40, 0, 30, 0, 1ull << 40}};
	struct planner_result r = solve(b, 4, 0.2);
	CHECK_EQ_U64(r.lower_bound_bytes, 5ull << 40);
	CHECK(r.arena_bytes <= 6ull << 40);
}

static void test_timeline_split(void)
{
	/* Two parts that never share a moment: each starts at offset 0. */
	struct block b[] = {B(100, 0, 10), B(50, 5, 10), B(80, 10, 20), B(80, 12, 30),
			    B(10, 40, 50)};
	struct planner_result r = solve(b, 5, 0);
	CHECK_EQ_U64(r.lower_bound_bytes, 160);
	CHECK_EQ_U64(r.arena_bytes, 160);
	CHECK_EQ_U64(b[4].offset_bytes, 0);
	CHECK(b[2].offset_bytes == 0 || b[3].offset_bytes == 0);
}

static void test_random_valid(void)
{
	struct rng r = {99};
	for (int round = 0; round < 40; round++) {
		size_t n = 1 + rnd(&r, 400);
		struct block *b = calloc(n, sizeof(*b));
		CHECK(b != NULL);
		uint64_t span = 1 + rnd(&r, 2000);
		for (size_t i = 0; i < n; i++) {
			b[i].t_start = rnd(&r, span);
			b[i].t_end = rnd(&r, 10) == 0 ? BLOCK_T_INFINITY
						      : b[i].t_start + 1 + rnd(&r, span / 4 + 1);
			b[i].size_bytes =
			    rnd(&r, 8) == 0 ? 0 : 1 + rnd(&r, 1u << (rnd(&r, 20) + 1));
			b[i].align_bytes = 1ull << rnd(&r, 6);
		}
		solve(b, n, round % 4 == 0 ? 0.05 : 0);
		free(b);
	}
}

/* Cuts the rectangle [t0, t1) x [y0, y1) into pieces (guillotine cuts, either
 * in time or in space), each piece one block: the optimum is the height. */
static void tile(struct rng *r, struct block *b, size_t *n, uint64_t t0, uint64_t t1, uint64_t y0,
		 uint64_t y1, int depth)
{
	int can_t = t1 - t0 >= 2, can_y = y1 - y0 >= 2;

	/* At most 2^depth pieces. */
	if (depth == 0 || (!can_t && !can_y) || rnd(r, 5) == 0) {
		b[(*n)++] = (struct block){y1 - y0, t0, t1, 0, 1};
		return;
	}
	if (can_t && (!can_y || rnd(r, 2))) {
		uint64_t c = t0 + 1 + rnd(r, t1 - t0 - 1);
		tile(r, b, n, t0, c, y0, y1, depth - 1);
		tile(r, b, n, c, t1, y0, y1, depth - 1);
	} else {
		uint64_t c = y0 + 1 + rnd(r, y1 - y0 - 1);
		tile(r, b, n, t0, t1, y0, c, depth - 1);
		tile(r, b, n, t0, t1, c, y1, depth - 1);
	}
}

/* Multiplies every size by unit and shuffles the blocks. */
static void scale_and_shuffle(struct rng *r, struct block *b, size_t n, uint64_t unit)
{
	for (size_t i = 0; i < n; i++)
		b[i].size_bytes *= unit;
	for (size_t i = n; i > 1; i--) {
		size_t j = rnd(r, i);
		struct block tmp = b[i - 1];
		b[i - 1] = b[j];
		b[j] = tmp;
	}
}

static void test_known_optimum(void)
{
	struct rng r = {2024};
	for (int round = 0; round < 12; round++) {
		struct block b[64];
		size_t n = 0;
		uint64_t height = 64 + rnd(&r, 1000), unit = 1 + rnd(&r, 3) * 1024;
		tile(&r, b, &n, 0, 50 + rnd(&r, 50), 0, height, 6);
		scale_and_shuffle(&r, b, n, unit);
		struct planner_result res = solve(b, n, 2.0);
		CHECK_EQ_U64(res.lower_bound_bytes, height * unit);
		CHECK_EQ_U64(res.arena_bytes, height * unit);
		CHECK(res.proven_optimal);
	}
}

/* Independent tilings side by side in time, all resting on two blocks that span
 * the whole timeline. Once both are placed, the tilings no longer share a block
 * and the search must split them into separate problems (the cut between two
 * tilings only reaches zero after the second long block): solved together, a
 * failure in one tiling sends the search back through the choices of the others. */
static void test_decomposition(void)
{
	struct rng r = {7};
	for (int round = 0; round < 10; round++) {
		struct block b[24 * 32 + 2];
		size_t n = 0;
		uint64_t height = 1000, width = 60, regions = 24, unit = 1024;
		for (uint64_t k = 0; k < regions; k++)
			tile(&r, b, &n, k * width, (k + 1) * width, 0, height, 5);
		b[n++] = (struct block){50, 0, regions * width, 0, 1};
		b[n++] = (struct block){70, 0, regions * width, 0, 1};
		scale_and_shuffle(&r, b, n, unit);
		struct planner_result res = solve(b, n, 3.0);
		CHECK_EQ_U64(res.lower_bound_bytes, (height + 120) * unit);
		CHECK_EQ_U64(res.arena_bytes, res.lower_bound_bytes);
	}
}

/* Many small blocks that live to the end, one per tick, on top of a big buffer
 * that goes away just before a bigger one comes: event-order best fit can put
 * the bigger one nowhere but on top of them all (1.2 times the lower bound),
 * and there are too many overlapping pairs for the quick pass's other
 * heuristics. With the big blocks packed apart, the two share their bytes and
 * the quick pass reaches the bound. */
static void test_big_blocks_apart(void)
{
	enum { SMALL = 12000 };
	struct block *b = calloc(SMALL + 2, sizeof(*b));
	size_t n = 0;

	CHECK(b != NULL);
	b[n++] = (struct block){16 << 20, 0, SMALL - 10, 0, 16};
	for (uint64_t i = 0; i < SMALL; i++)
		b[n++] = (struct block){4096, i + 1, BLOCK_T_INFINITY, 0, 16};
	b[n++] = (struct block){32 << 20, SMALL + 1, BLOCK_T_INFINITY, 0, 16};
	struct planner_result r = solve(b, n, 0);
	CHECK_EQ_U64(r.lower_bound_bytes, SMALL * 4096ull + (32 << 20));
	CHECK_EQ_U64(r.arena_bytes, r.lower_bound_bytes);
	free(b);
}

int main(void)
{
	test_lower_bound_examples();
	test_bad_input();
	test_zero_size_and_alignment();
	test_huge_sizes();
	test_timeline_split();
	test_random_valid();
	test_known_optimum();
	test_decomposition();
	test_big_blocks_apart();
	return 0;
}
