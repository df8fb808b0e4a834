/* Unit test of the plan checker on hand-made plans whose validity is obvious:
 * touching lifetimes share bytes legally, one byte of overlap is caught,
 * misalignment and out-of-arena blocks are caught, zero-size blocks overlap nothing. */
#include <errno.h>
#include <string.h>

#include "check.h"
#include "checker.h"

#define B(size, start, end, off, align)                                                            \
	{                                                                                          \
		(size), (start), (end), (off), (align)                                             \
	}

static int validate(const struct block *b, size_t n, uint64_t arena)
{
	char why[256];
	int ret = checker_validate(b, n, arena, why, sizeof(why));

	if (ret)
		CHECK(why[0] != 0);
	return ret;
}

static void test_touching_lifetimes(void)
{
	/* Same bytes, [0,5) then [5,9): half-open, no conflict. */
	struct block b[] = {B(8, 0, 5, 0, 1), B(8, 5, 9, 0, 1)};
	CHECK_EQ_U64(validate(b, 2, 8), 0);
	/* In the other order in the array too. */
	struct block c[] = {B(8, 5, 9, 0, 1), B(8, 0, 5, 0, 1)};
	CHECK_EQ_U64(validate(c, 2, 8), 0);
}

static void test_one_byte_overlap(void)
{
	struct block b[] = {B(8, 0, 5, 0, 1), B(8, 4, 9, 7, 1)};
	char why[256];
	CHECK(checker_validate(b, 2, 15, why, sizeof(why)) == -EINVAL);
	CHECK(strstr(why, "0") && strstr(why, "1"));
	/* Adjacent in space is fine. */
	b[1].offset_bytes = 8;
	CHECK_EQ_U64(validate(b, 2, 16), 0);
	/* One tick of common life is a conflict. */
	struct block c[] = {B(8, 0, 5, 0, 1), B(8, 4, 9, 0, 1)};
	CHECK(validate(c, 2, 8) == -EINVAL);
}

static void test_hidden_overlap(void)
{
	/* The conflicting pair is not adjacent in offset order at first sight: a
	 * long block below both, and a short one in between that ends early. */
	struct block b[] = {B(100, 0, 100, 0, 1), B(10, 0, 10, 100, 1), B(10, 20, 30, 105, 1),
			    B(5, 0, 50, 120, 1), B(30, 25, 40, 110, 1)};
	CHECK(validate(b, 5, 200) == -EINVAL);
	b[4].offset_bytes = 125; /* just above block 3 */
	CHECK_EQ_U64(validate(b, 5, 200), 0);
	b[4].offset_bytes = 114; /* one byte into block 2, which is not its neighbour */
	b[3].offset_bytes = 150;
	CHECK(validate(b, 5, 200) == -EINVAL);
}

static void test_alignment_and_bounds(void)
{
	struct block b[] = {B(16, 0, 10, 8, 16)};
	CHECK(validate(b, 1, 64) == -EINVAL);
	b[0].offset_bytes = 16;
	CHECK_EQ_U64(validate(b, 1, 32), 0);
	CHECK(validate(b, 1, 31) == -EINVAL);
	b[0].align_bytes = 3;
	CHECK(validate(b, 1, 64) == -EINVAL);
	/* Sizes near 2^64 must not wrap past the bound check. */
	struct block c[] = {B(UINT64_MAX - 8, 0, 10, 16, 1)};
	CHECK(validate(c, 1, UINT64_MAX) == -EINVAL);
}

static void test_zero_size(void)
{
	struct block b[] = {B(8, 0, 10, 0, 1), B(0, 0, 10, 4, 1), B(0, 3, 3, 0, 1)};
	CHECK_EQ_U64(validate(b, 3, 8), 0);
}

static void test_infinity(void)
{
	struct block b[] = {B(8, 0, BLOCK_T_INFINITY, 0, 1), B(8, 1000000, 1000001, 4, 1)};
	CHECK(validate(b, 2, 16) == -EINVAL);
	b[1].offset_bytes = 8;
	CHECK_EQ_U64(validate(b, 2, 16), 0);
}

/* A brute-force reference on random plans: the checker must agree exactly. */
static void test_random_against_brute_force(void)
{
	uint64_t seed = 12345;
	for (int round = 0; round < 3000; round++) {
		struct block b[12];
		size_t n = 2 + (size_t)(round % 11);
		for (size_t i = 0; i < n; i++) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			uint64_t r = seed >> 16;
			b[i].t_start = r % 20;
			b[i].t_end = b[i].t_start + 1 + (r >> 8) % 10;
			b[i].size_bytes = (r >> 16) % 9;
			b[i].offset_bytes = (r >> 24) % 40;
			b[i].align_bytes = 1;
		}
		int expect = 0;
		for (size_t i = 0; i < n; i++)
			for (size_t j = i + 1; j < n; j++)
				if (block_lifetimes_overlap(&b[i], &b[j]) &&
				    b[i].offset_bytes < b[j].offset_bytes + b[j].size_bytes &&
				    b[j].offset_bytes < b[i].offset_bytes + b[i].size_bytes)
					expect = -EINVAL;
		CHECK_EQ_U64((uint64_t)(int64_t)validate(b, n, 64), (uint64_t)(int64_t)expect);
	}
}

int main(void)
{
	test_touching_lifetimes();
	test_one_byte_overlap();
	test_hidden_overlap();
	test_alignment_and_bounds();
	test_zero_size();
	test_infinity();
	test_random_against_brute_force();
	return 0;
}
