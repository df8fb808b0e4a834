/* Packing instances in MiniMalloc's CSV format, so that the planner can be run on
 * the published benchmark files and its answers compared with other solvers.
 *
 * The header names the columns; `id`, `lower`, `upper` and `size` are required,
 * `alignment` and `offset` are optional, in any order. Any other column is an
 * error: MiniMalloc gives some (`gaps`, `hint`) a meaning we do not implement, and
 * silently ignoring them could turn a valid answer into an invalid one. `lower,upper`
 * is the half-open lifetime [lower, upper). An input `offset` column is read but
 * not used by the planner (it is replaced on output). Numbers are unsigned decimal
 * and fit in 64 bits; blank lines are skipped; a trailing CR is accepted.
 *
 * The sizes of the blocks that have one, each with its alignment less one
 * (the most padding it can need), add up to at most CSV_INSTANCE_TOTAL_MAX:
 * then every block fits one after another below it, and no sum the planner
 * makes of offsets, sizes and paddings passes 2^64. (Two blocks of 2^63 bytes
 * alive at once need an arena of 2^64 bytes, which no 64-bit offset reaches.) */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "block.h"

#define CSV_INSTANCE_TOTAL_MAX (UINT64_C(1) << 63)

struct csv_instance {
	size_t n;
	struct block *blocks; /* n blocks, in file order; align_bytes is 1 if absent */
	char *id_text;	      /* every row's id, each NUL-terminated */
	size_t *id_pos;	      /* id of row i is id_text + id_pos[i] */
	int has_alignment;    /* the input had an alignment column (it is written back) */
};

/* Parses len bytes of CSV text into inst (which need not be initialised).
 * Returns 0, -EINVAL with a one-line reason in why ("line N: ...") for bad
 * input, or -ENOMEM. On failure inst holds nothing to free. May allocate. */
int csv_instance_parse(const char *text, size_t len, struct csv_instance *inst, char *why,
		       size_t why_len);

/* Reads and parses the file at path. Returns as csv_instance_parse, or the
 * negative errno of the failed open/read (with why set). May allocate. */
int csv_instance_read(const char *path, struct csv_instance *inst, char *why, size_t why_len);

/* Reads fd to its end (a file, a pipe) and parses what it read, as
 * csv_instance_read; fd stays open. */
int csv_instance_read_fd(int fd, struct csv_instance *inst, char *why, size_t why_len);

/* Writes the header and one row per block: id,lower,upper,size[,alignment],offset.
 * Returns 0 or -EIO. Does not allocate beyond stdio. */
int csv_instance_write(FILE *out, const struct csv_instance *inst);

/* The id text of row i. */
static inline const char *csv_instance_id(const struct csv_instance *inst, size_t i)
{
	return inst->id_text + inst->id_pos[i];
}

/* Frees what inst holds and zeroes it. Safe on a zeroed instance. */
void csv_instance_free(struct csv_instance *inst);
