/* Distance between command lines, see args_distance.h. */
#include "args_distance.h"

#include <stdbool.h>
#include <string.h>

#include "temp_names.h"

/* The argument at *at of a NUL-separated list ending at end, moving *at past it;
 * sets *len. */
static const char *next_arg(const char **at, const char *end, uint32_t *len)
{
	const char *arg = *at;

	*len = (uint32_t)strnlen(arg, (size_t)(end - arg));
	*at = arg + *len + 1;
	return arg;
}

/* FNV-1a of the argument as normalised: a few arguments each, a byte at a
 * time as the reader gives them. */
static uint64_t arg_hash(const char *arg, uint32_t len, const char *tmpdir)
{
	struct temp_names_reader r;
	uint64_t h = 0xcbf29ce484222325u;
	int c;

	temp_names_begin(&r, arg, len, tmpdir);
	while ((c = temp_names_next(&r)) >= 0)
		h = (h ^ (uint64_t)c) * 0x100000001b3u;
	return h;
}

static uint32_t normal_len(const char *arg, uint32_t len, const char *tmpdir)
{
	struct temp_names_reader r;
	uint32_t n = 0;

	temp_names_begin(&r, arg, len, tmpdir);
	while (temp_names_next(&r) >= 0)
		n++;
	return n;
}

/* The bytes of x and y outside their common start and end, as normalised. The
 * end is compared as written, and only where no temporary name was replaced:
 * the reader reads forwards, and a random name's last characters are no
 * likeness. */
static uint32_t unlike_bytes(const char *x, uint32_t x_len, const char *y, uint32_t y_len,
			     const char *tmpdir)
{
	struct temp_names_reader rx, ry;
	uint32_t nx = normal_len(x, x_len, tmpdir), ny = normal_len(y, y_len, tmpdir);
	uint32_t least = nx < ny ? nx : ny, common = 0;
	int c;

	temp_names_begin(&rx, x, x_len, tmpdir);
	temp_names_begin(&ry, y, y_len, tmpdir);
	while ((c = temp_names_next(&rx)) >= 0 && c == temp_names_next(&ry))
		common++;
	if (nx == x_len && ny == y_len)
		for (uint32_t k = 1; k <= least && x[x_len - k] == y[y_len - k]; k++)
			common++;
	if (common > least)
		common = least;
	return nx + ny - 2 * common;
}

/* Keeps the argument at arg of a list that starts at base, if there is room;
 * else counts it in *past. */
static void keep(struct args_distance_arg *kept, uint32_t *n, uint32_t *past, const char *base,
		 const char *arg, uint32_t len, const char *tmpdir)
{
	if (*n == ARGS_DISTANCE_KEPT) {
		(*past)++;
		return;
	}
	kept[(*n)++] = (struct args_distance_arg){
	    .hash = arg_hash(arg, len, tmpdir),
	    .at = (uint32_t)(arg - base),
	    .len = len,
	};
}

void args_distance(const char *a, uint32_t a_bytes, const char *b, uint32_t b_bytes,
		   const char *tmpdir, struct args_distance_scratch *s, struct args_distance *out)
{
	const char *pa = a, *ea = a + a_bytes, *pb = b, *eb = b + b_bytes;
	uint32_t na = 0, nb = 0, past_a = 0, past_b = 0, skipped;

	*out = (struct args_distance){0};
	/* argv[0] names the executable, which is the same for both (or not compared):
	 * how it was spelled is no difference. */
	if (pa < ea)
		next_arg(&pa, ea, &skipped);
	if (pb < eb)
		next_arg(&pb, eb, &skipped);
	while (pa < ea || pb < eb) {
		uint32_t la = 0, lb = 0;
		const char *x = pa < ea ? next_arg(&pa, ea, &la) : NULL;
		const char *y = pb < eb ? next_arg(&pb, eb, &lb) : NULL;
		if (x && y && temp_names_same(x, la, y, lb, tmpdir))
			continue;
		out->places++;
		if (x)
			keep(s->a, &na, &past_a, a, x, la, tmpdir);
		if (y)
			keep(s->b, &nb, &past_b, b, y, lb, tmpdir);
	}
	/* The arguments equal by position are in both multisets: the difference
	 * of the multisets is that of the arguments left. */
	uint32_t only_a = na, only_b = nb;
	for (uint32_t i = 0; i < na; i++)
		for (uint32_t j = 0; j < nb; j++)
			if (!s->b[j].matched && s->b[j].hash == s->a[i].hash) {
				s->a[i].matched = s->b[j].matched = 1;
				only_a--;
				only_b--;
				break;
			}
	only_a += past_a;
	only_b += past_b;
	out->apart = only_a > only_b ? only_a : only_b;
	/* How alike those left are, paired in their order: f257.c is likelier
	 * f1.c than main.c (cc1 compiling a file of the same kind). */
	for (uint32_t i = 0, j = 0; i < na || j < nb;) {
		while (i < na && s->a[i].matched)
			i++;
		while (j < nb && s->b[j].matched)
			j++;
		const struct args_distance_arg *x = i < na ? &s->a[i++] : NULL;
		const struct args_distance_arg *y = j < nb ? &s->b[j++] : NULL;
		if (x && y)
			out->unlike_bytes +=
			    unlike_bytes(a + x->at, x->len, b + y->at, y->len, tmpdir);
		else if (x || y)
			out->unlike_bytes += x ? normal_len(a + x->at, x->len, tmpdir)
					       : normal_len(b + y->at, y->len, tmpdir);
	}
}

int args_distance_compare(const struct args_distance *x, const struct args_distance *y)
{
	if (x->apart != y->apart)
		return x->apart < y->apart ? -1 : 1;
	if (x->places != y->places)
		return x->places < y->places ? -1 : 1;
	if (x->unlike_bytes != y->unlike_bytes)
		return x->unlike_bytes < y->unlike_bytes ? -1 : 1;
	return 0;
}
