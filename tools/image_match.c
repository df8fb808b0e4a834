/* Pairing images across plans, see image_match.h. */
#define _GNU_SOURCE
#include "image_match.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args_distance.h"
#include "temp_names.h"
#include "text_safe.h"

/* An image as pairing sees it. */
struct image_key {
	const char *exe;      /* file name */
	const char *exe_path; /* in full: two programs of one name in two directories */
	uint64_t args_key;    /* of argv in full (argv[0] by its file name), not cut */
	uint32_t fork;	      /* fork ordinal, 0 if not forked without exec */
	char **args;	      /* normalised, argv[0] first */
	size_t arg_count;
	const char *argv; /* as kept, NUL-separated, in the plan's buffer */
	uint32_t argv_bytes;
	int32_t paired; /* the other plan's image, or -1 */
};

const char *image_match_next_arg(const struct plan_image *im, const char *prev)
{
	const char *start = im->strings + im->record.args_offset;
	const char *end = start + im->record.args_bytes;
	const char *p = prev ? prev + strnlen(prev, (size_t)(end - prev)) + 1 : start;

	return p < end ? p : NULL;
}

const char *image_match_exe_name(const struct plan_image *im)
{
	const char *path = im->strings + im->record.exe_path_offset;
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

void image_match_label(const struct plan_image *im, char *out, size_t cap)
{
	size_t at = 0;

	out[0] = '\0';
	for (const char *a = image_match_next_arg(im, NULL); a; a = image_match_next_arg(im, a)) {
		if ((at && !text_safe_append(out, cap, &at, " ", 1)) ||
		    !text_safe_append(out, cap, &at, a, strlen(a))) {
			if (cap > 4)
				strcpy(out + (at < cap - 4 ? at : cap - 4), "...");
			return;
		}
	}
	if (!at) {
		const char *exe = image_match_exe_name(im);
		text_safe_append(out, cap, &at, exe, strlen(exe));
	}
}

void image_match_normalize(const char *arg, char *out, size_t cap)
{
	struct temp_names_reader r;
	size_t o = 0;
	int c;

	temp_names_begin(&r, arg, strlen(arg), getenv("TMPDIR"));
	while (o + 1 < cap && (c = temp_names_next(&r)) >= 0)
		out[o++] = (char)c;
	out[o] = '\0';
}

static void keys_free(struct image_key *keys, size_t n)
{
	for (size_t i = 0; keys && i < n; i++) {
		for (size_t a = 0; a < keys[i].arg_count; a++)
			free(keys[i].args[a]);
		free(keys[i].args);
	}
	free(keys);
}

/* The keys of every image of a validated plan buffer, or NULL on ENOMEM. */
static struct image_key *keys_of(const void *buf, uint32_t *count)
{
	uint32_t n = plan_file_header(buf)->image_count;
	struct image_key *keys = calloc(n ? n : 1, sizeof(*keys));

	*count = n;
	for (uint32_t i = 0; keys && i < n; i++) {
		struct plan_image im;
		struct image_key *k = &keys[i];
		plan_file_image(buf, i, &im);
		k->exe = image_match_exe_name(&im);
		k->exe_path = im.strings + im.record.exe_path_offset;
		k->args_key = im.record.args_key;
		k->fork = im.record.flags & PLAN_IMAGE_FORKED ? im.record.fork_ordinal : 0;
		k->paired = -1;
		k->argv = im.strings + im.record.args_offset;
		k->argv_bytes = im.record.args_bytes;
		for (const char *a = image_match_next_arg(&im, NULL); a;
		     a = image_match_next_arg(&im, a))
			k->arg_count++;
		k->args = calloc(k->arg_count ? k->arg_count : 1, sizeof(*k->args));
		if (!k->args) {
			keys_free(keys, n);
			return NULL;
		}
		size_t j = 0;
		for (const char *a = image_match_next_arg(&im, NULL); a;
		     a = image_match_next_arg(&im, a), j++) {
			size_t cap = strlen(a) + 1;
			k->args[j] = malloc(cap);
			if (!k->args[j]) {
				keys_free(keys, n);
				return NULL;
			}
			image_match_normalize(a, k->args[j], cap);
		}
	}
	return keys;
}

/* How far apart the arguments of a and b are, as replay measures them
 * (args_distance.h). */
static struct args_distance arg_distance(const struct image_key *a, const struct image_key *b,
					 struct args_distance_scratch *s)
{
	struct args_distance d;

	args_distance(a->argv, a->argv_bytes, b->argv, b->argv_bytes, getenv("TMPDIR"), s, &d);
	return d;
}

/* How strictly a pass of pair_nearest pairs. */
enum pairing {
	SAME_RUN_SAME_PATH, /* the same arguments in full, the same executable's path */
	SAME_RUN_SAME_ARG0, /* the same arguments in full, argv[0] as it was typed */
	SAME_RUN,	    /* the same arguments in full */
	SAME_ARGS,	    /* the same arguments as kept and normalised */
	NEAREST,	    /* the nearest arguments (args_distance) */
};

static bool same_arg0(const struct image_key *a, const struct image_key *b)
{
	return a->arg_count && b->arg_count && !strcmp(a->args[0], b->args[0]);
}

/* Among candidates as near as each other, the better one: the same path, then
 * the same argv[0]. (Two programs named `test` in two directories.) */
static unsigned likeness(const struct image_key *a, const struct image_key *b)
{
	return 2u * !strcmp(a->exe_path, b->exe_path) + same_arg0(a, b);
}

/* Negative if a candidate at distance d and of likeness like is nearer than
 * the best so far: apart and places, then likeness, then unlike_bytes. */
static int nearer(const struct args_distance *d, unsigned like, const struct args_distance *best,
		  unsigned best_like)
{
	struct args_distance by_count = *d, best_by_count = *best;
	int c;

	by_count.unlike_bytes = best_by_count.unlike_bytes = 0;
	if ((c = args_distance_compare(&by_count, &best_by_count)))
		return c;
	if (like != best_like)
		return like > best_like ? -1 : 1;
	return args_distance_compare(d, best);
}

/* Pairs each unpaired head image with an unpaired base image of the same
 * executable name and fork ordinal, as the pass allows: the nearest in
 * arguments (apart, then places), then the likest (likeness), then the likest
 * differing arguments, the first of equals. The arguments
 * kept are cut (32 KiB) and seen through temporary names: args_key, of the
 * whole of them, tells apart two runs that differ only past the cut. */
static void pair_nearest(struct image_key *base, uint32_t nb, struct image_key *head, uint32_t nh,
			 enum pairing pass, struct args_distance_scratch *s)
{
	for (uint32_t h = 0; h < nh; h++) {
		int32_t best = -1;
		struct args_distance best_distance = {0};
		unsigned best_likeness = 0;
		if (head[h].paired >= 0)
			continue;
		for (uint32_t b = 0; b < nb; b++) {
			const struct image_key *x = &base[b], *y = &head[h];
			if (x->paired >= 0 || strcmp(x->exe, y->exe) || x->fork != y->fork)
				continue;
			const bool same_run = x->args_key == y->args_key;
			if ((pass == SAME_RUN_SAME_PATH &&
			     (!same_run || strcmp(x->exe_path, y->exe_path))) ||
			    (pass == SAME_RUN_SAME_ARG0 && (!same_run || !same_arg0(x, y))) ||
			    (pass == SAME_RUN && !same_run))
				continue;
			struct args_distance d = arg_distance(x, y, s);
			if (pass == SAME_ARGS && d.places)
				continue;
			unsigned like = likeness(x, y);
			if (best < 0 || nearer(&d, like, &best_distance, best_likeness) < 0) {
				best = (int32_t)b;
				best_distance = d;
				best_likeness = like;
			}
		}
		if (best >= 0) {
			head[h].paired = best;
			base[best].paired = (int32_t)h;
		}
	}
}

int image_match(const void *base_buf, const void *head_buf, struct image_pair **pairs,
		size_t *count)
{
	uint32_t nb, nh;
	struct image_key *base = keys_of(base_buf, &nb), *head = keys_of(head_buf, &nh);
	struct args_distance_scratch *s = malloc(sizeof(*s));
	struct image_pair *out = NULL;
	size_t n = 0;

	if (!base || !head || !s)
		goto out;
	/* The strictest pairs first, so that a looser match never takes the
	 * image of a stricter one. */
	for (enum pairing pass = SAME_RUN_SAME_PATH; pass <= NEAREST; pass++)
		pair_nearest(base, nb, head, nh, pass, s);
	out = calloc((size_t)nb + nh + 1, sizeof(*out));
	if (!out)
		goto out;
	for (uint32_t h = 0; h < nh; h++) {
		int32_t b = head[h].paired;
		out[n++] = (struct image_pair){
		    .base = b,
		    .head = (int32_t)h,
		    .args_differ = b >= 0 && arg_distance(&base[b], &head[h], s).places > 0,
		};
	}
	for (uint32_t b = 0; b < nb; b++)
		if (base[b].paired < 0)
			out[n++] = (struct image_pair){.base = (int32_t)b, .head = -1};
out:
	free(s);
	keys_free(base, nb);
	keys_free(head, nh);
	*pairs = out;
	*count = n;
	return out ? 0 : -ENOMEM;
}
