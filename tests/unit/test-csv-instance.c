/* Unit test of the MiniMalloc CSV reader and writer: a round trip keeps ids and
 * numbers, optional columns in any order, and every kind of bad line is rejected
 * with its line number, as is an instance no 64-bit arena could hold. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "csv_instance.h"

/* The text is len bytes (it may hold a NUL). */
static void expect_error_len(const char *text, size_t len, const char *needle)
{
	struct csv_instance inst;
	char why[256] = "";
	int ret = csv_instance_parse(text, len, &inst, why, sizeof(why));

	if (ret != -EINVAL || !strstr(why, needle)) {
		fprintf(stderr, "input:\n%s\nret %d, why '%s', wanted '%s'\n", text, ret, why,
			needle);
		exit(1);
	}
	CHECK(inst.n == 0 && inst.blocks == NULL);
}

static void expect_error(const char *text, const char *needle)
{
	expect_error_len(text, strlen(text), needle);
}

static void test_round_trip(void)
{
	const char *text =
	    "id,lower,upper,size\nb1,0,3,4\nb2,3,9,4\r\n\nx y,0,18446744073709551615,"
	    "1099511627776\n";
	struct csv_instance inst;
	char why[256];
	char *buf = NULL;
	size_t len = 0;

	CHECK_EQ_U64(csv_instance_parse(text, strlen(text), &inst, why, sizeof(why)), 0);
	CHECK_EQ_U64(inst.n, 3);
	CHECK(!strcmp(csv_instance_id(&inst, 0), "b1"));
	CHECK(!strcmp(csv_instance_id(&inst, 2), "x y"));
	CHECK_EQ_U64(inst.blocks[1].t_start, 3);
	CHECK_EQ_U64(inst.blocks[1].t_end, 9);
	CHECK_EQ_U64(inst.blocks[2].t_end, BLOCK_T_INFINITY);
	CHECK_EQ_U64(inst.blocks[2].size_bytes, 1ull << 40);
	CHECK_EQ_U64(inst.blocks[0].align_bytes, 1);
	inst.blocks[0].offset_bytes = 4;
	inst.blocks[1].offset_bytes = 0;
	inst.blocks[2].offset_bytes = 8;

	FILE *f = open_memstream(&buf, &len);
	CHECK(f != NULL);
	CHECK_EQ_U64(csv_instance_write(f, &inst), 0);
	fclose(f);
	CHECK(!strcmp(buf, "id,lower,upper,size,offset\nb1,0,3,4,4\nb2,3,9,4,0\n"
			   "x y,0,18446744073709551615,1099511627776,8\n"));

	/* Reading the output again gives the same blocks, offsets included. */
	struct csv_instance again;
	CHECK_EQ_U64(csv_instance_parse(buf, len, &again, why, sizeof(why)), 0);
	CHECK_EQ_U64(again.n, inst.n);
	for (size_t i = 0; i < inst.n; i++) {
		CHECK(!memcmp(&again.blocks[i], &inst.blocks[i], sizeof(struct block)));
		CHECK(!strcmp(csv_instance_id(&again, i), csv_instance_id(&inst, i)));
	}
	free(buf);
	csv_instance_free(&again);
	csv_instance_free(&inst);
}

static void test_optional_columns(void)
{
	const char *text = "size,offset,alignment,upper,id,lower\n16,5,8,10,a,2\n";
	struct csv_instance inst;
	char why[256];

	CHECK_EQ_U64(csv_instance_parse(text, strlen(text), &inst, why, sizeof(why)), 0);
	CHECK_EQ_U64(inst.n, 1);
	CHECK(inst.has_alignment);
	CHECK_EQ_U64(inst.blocks[0].size_bytes, 16);
	CHECK_EQ_U64(inst.blocks[0].align_bytes, 8);
	CHECK_EQ_U64(inst.blocks[0].t_start, 2);
	CHECK_EQ_U64(inst.blocks[0].t_end, 10);
	CHECK(!strcmp(csv_instance_id(&inst, 0), "a"));
	csv_instance_free(&inst);
}

static void test_bad_input(void)
{
	expect_error("", "line 1: missing header");
	expect_error("id,lower,size\n", "line 1: header lacks the 'upper' column");
	expect_error("id,lower,upper,size,gaps\n", "line 1: unknown column 'gaps'");
	expect_error("id,lower,upper,size,size\n", "line 1: column 'size' appears twice");
	expect_error("id,lower,upper,size\na,0,3,4\nb,0,3\n", "line 3:");
	expect_error("id,lower,upper,size\na,0,3,4\nb,0,3,4,5\n", "line 3: more than");
	expect_error("id,lower,upper,size\na,0,x3,4\n", "line 2: upper 'x3'");
	expect_error("id,lower,upper,size\na,0,3,4\n\nb,0,3,4k\n", "line 4: size '4k'");
	expect_error("id,lower,upper,size\na,0,3,-4\n", "line 2: size '-4'");
	expect_error("id,lower,upper,size\na,5,5,4\n", "line 2: upper 5 is not above lower 5");
	expect_error("id,lower,upper,size\na,6,5,4\n", "line 2: upper 5 is not above lower 6");
	expect_error("id,lower,upper,size\na,0,18446744073709551616,4\n", "line 2: upper");
	expect_error("id,lower,upper,size,alignment\na,0,3,4,3\n", "line 2: alignment 3");
	expect_error("id,lower,upper,size\n,0,3,4\n", "line 2: empty id");
	/* An id cut at a NUL would not name its row once written back. */
	static const char nul[] = "id,lower,upper,size\na,0,3,4\nb\0c,0,3,4\n";
	expect_error_len(nul, sizeof(nul) - 1, "line 3: a NUL byte");
}

/* Sizes, each with its alignment less one, add up to 2^63 at most: the
 * blocks then fit one after another in 64-bit offsets, whatever the planner
 * does with them. */
static void test_total_bound(void)
{
	struct csv_instance inst;
	char why[256];
	/* 2^62 twice is 2^63: the most; a zero-size block adds nothing. */
	const char *most = "id,lower,upper,size,alignment\na,0,2,4611686018427387904,1\n"
			   "b,1,3,4611686018427387904,1\nz,0,9,0,9223372036854775808\n";

	CHECK(csv_instance_parse(most, strlen(most), &inst, why, sizeof(why)) == 0);
	CHECK(inst.n == 3);
	csv_instance_free(&inst);
	expect_error("id,lower,upper,size\na,0,2,4611686018427387904\nb,1,3,4611686018427387904\n"
		     "c,5,6,1\n",
		     "line 4: the sizes and alignments so far add up to more than 2^63 bytes");
	expect_error("id,lower,upper,size\na,0,2,18446744073709551615\n", "line 2: the sizes");
	/* 16 bytes that may need 2^63 - 1 of padding. */
	expect_error("id,lower,upper,size,alignment\na,0,2,16,9223372036854775808\n",
		     "line 2: the sizes");
}

int main(void)
{
	test_round_trip();
	test_optional_columns();
	test_bad_input();
	test_total_bound();
	return 0;
}
