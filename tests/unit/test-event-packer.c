/* The event packer against the independent checker: random traces with dense and
 * sparse times (both ordering paths), alignments, zero sizes, touching lifetimes,
 * never-freed blocks; the lower bound it reports equals planner_lower_bound; and a
 * trace that is one stack discipline packs exactly to its lower bound. */
#include <stdlib.h>

#include "check.h"
#include "checker.h"
#include "event_packer.h"
#include "planner.h"

static uint64_t rng = 0x2545F4914F6CDD1Dull;

static uint64_t next_random(void)
{
	return check_random(&rng);
}

static void check_valid(struct block *b, size_t n)
{
	uint64_t arena, lower, lower2;
	char why[256];

	CHECK(event_packer_pack(b, n, &arena, &lower) == 0);
	if (checker_validate(b, n, arena, why, sizeof(why)) != 0) {
		fprintf(stderr, "invalid packing: %s\n", why);
		exit(1);
	}
	CHECK(planner_lower_bound(b, n, &lower2) == 0);
	CHECK_EQ_U64(lower, lower2);
	CHECK(arena >= lower);
}

int main(void)
{
	for (int round = 0; round < 60; round++) {
		size_t n = 1 + next_random() % 5000;
		uint64_t spread = round % 2 ? 3 * n : UINT64_C(1) << 40; /* dense or sparse */
		struct block *b = calloc(n, sizeof(*b));
		for (size_t i = 0; i < n; i++) {
			b[i].t_start = next_random() % spread;
			b[i].t_end = next_random() % 20 == 0
					 ? BLOCK_T_INFINITY
					 : b[i].t_start + 1 + next_random() % (spread / 8 + 1);
			b[i].size_bytes =
			    next_random() % 10 == 0
				? 0
				: 1 + next_random() % (next_random() % 4 ? 300 : 100000);
			b[i].align_bytes = UINT64_C(1) << (next_random() % 13);
		}
		check_valid(b, n);
		free(b);
	}

	/* Touching lifetimes share space: [0,1) then [1,2) of the same size. */
	struct block touch[2] = {{64, 0, 1, 0, 16}, {64, 1, 2, 0, 16}};
	uint64_t arena, lower;
	CHECK(event_packer_pack(touch, 2, &arena, &lower) == 0);
	CHECK_EQ_U64(arena, 64);

	/* A stack discipline (last allocated, first freed) packs to the lower bound. */
	size_t n = 1000;
	struct block *s = calloc(n, sizeof(*s));
	for (size_t i = 0; i < n; i++) {
		s[i].size_bytes = 16 * (1 + next_random() % 64);
		s[i].t_start = i;
		s[i].t_end = 2 * n - i;
		s[i].align_bytes = 16;
	}
	check_valid(s, n);
	CHECK(event_packer_pack(s, n, &arena, &lower) == 0);
	CHECK_EQ_U64(arena, lower);
	free(s);

	/* Bad input is refused. */
	struct block bad = {16, 5, 5, 0, 16};
	CHECK(event_packer_pack(&bad, 1, &arena, &lower) < 0);
	bad = (struct block){16, 0, 1, 0, 24};
	CHECK(event_packer_pack(&bad, 1, &arena, &lower) < 0);
	return 0;
}
