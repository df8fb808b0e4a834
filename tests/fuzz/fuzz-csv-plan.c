/* libFuzzer target for `memplan plan --csv`: a hostile packing instance must
 * get a one-line reason or a plan the checker accepts. Every instance the
 * parser takes is planned (the quick heuristics, one thread) and checked; a
 * planner error or an invalid plan is a bug. What the parser takes, written
 * back, must read again as the same blocks, with their offsets. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checker.h"
#include "csv_instance.h"
#include "planner.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Instances past this many rows are parsed only: the quick pass is
 * O(n log n) but its pairwise heuristics are not, and the fuzzer should
 * spend its time on many inputs. */
#define PLANNED_ROWS_MAX 256

static void reason_is_one_line(const char *why)
{
	if (!why[0] || strchr(why, '\n'))
		abort();
}

/* inst, written and parsed again, gives the same blocks. */
static void round_trip(const struct csv_instance *inst)
{
	struct csv_instance again;
	char why[256], *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	if (!out)
		return;
	int r = csv_instance_write(out, inst);
	if (fclose(out) || r) {
		free(text);
		return;
	}
	if (csv_instance_parse(text, len, &again, why, sizeof(why)) != 0 || again.n != inst->n)
		abort();
	for (size_t i = 0; i < inst->n; i++) {
		const struct block *a = &inst->blocks[i], *b = &again.blocks[i];
		if (a->size_bytes != b->size_bytes || a->t_start != b->t_start ||
		    a->t_end != b->t_end || a->offset_bytes != b->offset_bytes ||
		    (inst->has_alignment && a->align_bytes != b->align_bytes) ||
		    strcmp(csv_instance_id(inst, i), csv_instance_id(&again, i)))
			abort();
	}
	csv_instance_free(&again);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct csv_instance inst;
	struct planner_result res;
	char why[512];

	int r = csv_instance_parse((const char *)data, size, &inst, why, sizeof(why));
	if (r == -EINVAL)
		reason_is_one_line(why);
	if (r)
		return 0;
	if (inst.n <= PLANNED_ROWS_MAX) {
		const struct planner_options opt = {.time_limit_s = 0, .threads = 1};
		r = planner_solve(inst.blocks, inst.n, &opt, &res);
		if (r && r != -ENOMEM)
			abort();
		if (!r) {
			if (checker_validate(inst.blocks, inst.n, res.arena_bytes, why,
					     sizeof(why)) != 0 ||
			    res.arena_bytes < res.lower_bound_bytes)
				abort();
		}
	}
	round_trip(&inst);
	csv_instance_free(&inst);
	return 0;
}
