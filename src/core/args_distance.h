/* How far apart two command lines are, for taking the recorded image nearest a
 * process's arguments (replay) and pairing the images of two plans (diff,
 * check).
 *
 * By position alone, `jq '.tags[]' -r B` was as far from `jq -r '.tags[]' A`
 * as from `jq -c '{id,name}' A`, and every cc1 of a new file as far from the
 * image of main.c as from that of f1.c; the first image won. Arguments also
 * count as a multiset, and among equals the likest differing arguments win.
 *
 * Pure: no allocation, no global state (the caller gives the scratch), so that
 * the preload library can use it at start-up. */
#pragma once

#include <stdint.h>

/* argv[0] aside, and with the names of temporary files seen through
 * (temp_names.h). */
struct args_distance {
	/* The arguments one list has that the other has not (each as often as
	 * it has it more), the larger of the two counts: reordered arguments are
	 * no difference, a substituted one is one. At most places. */
	uint32_t apart;
	/* The places that differ, position by position, one list's arguments
	 * beyond the other's included. 0 only for the same arguments in the same
	 * order. */
	uint32_t places;
	/* Of the arguments apart, paired in their order (the first of each list
	 * with the first of the other's, ...): the bytes outside each pair's
	 * common start and end, and all of an argument left without a pair. */
	uint32_t unlike_bytes;
};

/* The arguments that differ by position and that the multiset comparison
 * looks at, per list; past them, arguments count as apart. A command line
 * shifted by an inserted argument differs at every later place. */
#define ARGS_DISTANCE_KEPT 256

struct args_distance_scratch {
	struct args_distance_arg {
		uint64_t hash; /* of the argument as temp_names reads it */
		uint32_t at, len;
		uint32_t matched; /* the other list has it too */
	} a[ARGS_DISTANCE_KEPT], b[ARGS_DISTANCE_KEPT];
};

/* Sets *out to the distance between the argument lists a and b (each
 * NUL-separated, of the given lengths), with tmpdir as $TMPDIR (or NULL).
 * Takes time linear in the lengths, plus the product of the numbers of
 * arguments that differ by position (at most ARGS_DISTANCE_KEPT each). Does
 * not allocate; s is the caller's. */
void args_distance(const char *a, uint32_t a_bytes, const char *b, uint32_t b_bytes,
		   const char *tmpdir, struct args_distance_scratch *s, struct args_distance *out);

/* Negative if x is nearer than y, positive if farther, 0 if as near: by apart,
 * then places, then unlike_bytes. */
int args_distance_compare(const struct args_distance *x, const struct args_distance *y);
