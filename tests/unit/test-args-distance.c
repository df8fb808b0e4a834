/* args_distance: reordered arguments are no difference, a substituted one is
 * one, and among images as near the likest differing arguments win; exact
 * stays the same arguments in the same order, temporary names seen through. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "args_distance.h"
#include "check.h"

static struct args_distance_scratch scratch;

/* The distance between two command lines given with spaces between their
 * arguments. */
static struct args_distance dist(const char *a, const char *b)
{
	static char la[4096], lb[4096];
	struct args_distance d;
	size_t na = strlen(a) + 1, nb = strlen(b) + 1;

	memcpy(la, a, na);
	memcpy(lb, b, nb);
	for (size_t i = 0; i < na; i++)
		la[i] = la[i] == ' ' ? '\0' : la[i];
	for (size_t i = 0; i < nb; i++)
		lb[i] = lb[i] == ' ' ? '\0' : lb[i];
	args_distance(la, (uint32_t)na, lb, (uint32_t)nb, NULL, &scratch, &d);
	return d;
}

/* Whether, for the process cmd, image x is nearer than image y. */
static bool nearer(const char *cmd, const char *x, const char *y)
{
	struct args_distance dx = dist(x, cmd), dy = dist(y, cmd);
	return args_distance_compare(&dx, &dy) < 0;
}

int main(void)
{
	struct args_distance d = dist("/usr/bin/jq -r .x a.json", "jq -r .x a.json");
	CHECK(!d.apart && !d.places && !d.unlike_bytes); /* argv[0] by any path */
	d = dist("cc1 f1.c -o /tmp/ccAbC123.s", "cc1 f1.c -o /tmp/ccXyZ789.s");
	CHECK(!d.places);
	d = dist("jq -r .x a.json", "jq .x -r a.json");
	CHECK_EQ_U64(d.apart, 0);
	CHECK_EQ_U64(d.places, 2); /* reordered: not the same run */
	d = dist("jq -r .x a.json", "jq .x -r b.json");
	CHECK_EQ_U64(d.apart, 1);
	CHECK_EQ_U64(d.places, 3);
	CHECK_EQ_U64(d.unlike_bytes, 2); /* a and b */
	d = dist("head -n 5 f", "head -n 5");
	CHECK_EQ_U64(d.apart, 1);
	CHECK_EQ_U64(d.places, 1);
	CHECK_EQ_U64(d.unlike_bytes, 1);
	/* An argument repeated counts as often as it comes. */
	d = dist("cc -I. -I. x.c", "cc -I. x.c");
	CHECK_EQ_U64(d.apart, 1);

	/* The user's jq: by position the first image was as near. */
	CHECK(nearer("jq .tags[] -r b.json", "jq -r .tags[] a.json", "jq -c {id,name} a.json"));
	/* Same order wins over reordered, among those apart as much. */
	CHECK(nearer("jq -r .x b.json", "jq -r .x a.json", "jq .x -r a.json"));
	/* Ties by position go to the likest: cc1 of a new file. */
	CHECK(nearer("cc1 f257.c -dumpbase f257.c", "cc1 f1.c -dumpbase f1.c",
		     "cc1 main.c -dumpbase main.c"));
	CHECK(nearer("t 2 5001", "t 2 5000", "t 2 100"));
	CHECK(nearer("t 2 101", "t 2 100", "t 2 5000"));
	/* Fewer differences still win over likeness. */
	CHECK(nearer("t 1 2 3", "t 1 2 x", "t 1 9 3333"));

	/* Past ARGS_DISTANCE_KEPT differing places, arguments count as apart:
	 * an argument inserted before 300 others. */
	static char a[4096], b[4096];
	size_t at_a = 0, at_b = 0;
	at_a += (size_t)sprintf(a + at_a, "cc");
	at_b += (size_t)sprintf(b + at_b, "cc -new");
	for (int i = 0; i < 300; i++) {
		at_a += (size_t)sprintf(a + at_a, " -I%d", i);
		at_b += (size_t)sprintf(b + at_b, " -I%d", i);
	}
	d = dist(a, b);
	CHECK_EQ_U64(d.places, 301);
	CHECK(d.apart >= 1 && d.apart < 301 - ARGS_DISTANCE_KEPT + 2);
	return 0;
}
