/* Re-planning an image, see plan_builder.h. */
#include "plan_builder.h"

#include "event_packer.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Runs the planner on a copy of blocks and keeps its offsets if they pack smaller. */
static int improve(struct block *blocks, uint64_t n, const struct planner_options *opt,
		   uint64_t *arena_bytes)
{
	struct planner_result result;
	struct block *copy = malloc((n ? n : 1) * sizeof(*copy));
	int r;

	if (!copy)
		return -ENOMEM;
	memcpy(copy, blocks, n * sizeof(*copy));
	r = planner_solve(copy, (size_t)n, opt, &result);
	if (r == 0 && result.arena_bytes < *arena_bytes) {
		memcpy(blocks, copy, n * sizeof(*copy));
		*arena_bytes = result.arena_bytes;
	}
	free(copy);
	return r;
}

/* Packs blocks[0..n): the event packer (it is linear and gives the lower bound),
 * then, with opt, the planner proper; the smaller arena wins. Sets the record's
 * arena and lower bound. */
static int pack_blocks(struct block *blocks, uint64_t n, const struct planner_options *opt,
		       struct plan_image_record *rec)
{
	uint64_t arena_bytes, lower_bound_bytes;
	int r;

	r = event_packer_pack(blocks, (size_t)n, &arena_bytes, &lower_bound_bytes);
	if (r == 0 && arena_bytes > lower_bound_bytes && opt)
		r = improve(blocks, n, opt, &arena_bytes);
	if (r < 0)
		return r;
	rec->arena_bytes = arena_bytes;
	rec->lower_bound_bytes = lower_bound_bytes;
	return 0;
}

/* The block an entry (or allocation) takes: rounded to the replay granule, since
 * replay tracks occupancy per granule, and at least granule-aligned. An in-place
 * realloc takes no space (size 0 conflicts with nothing): its block's lifetime is
 * stretched over it instead, and it shares its block's offset. */
static struct block block_of(uint64_t size_bytes, uint64_t align_bytes, uint64_t t_start,
			     uint64_t t_end, bool in_place)
{
	if (in_place)
		return (struct block){0, t_start, t_end, 0, 1};
	return (struct block){
	    .size_bytes =
		(size_bytes + PLAN_GRANULE_BYTES - 1) / PLAN_GRANULE_BYTES * PLAN_GRANULE_BYTES,
	    .t_start = t_start,
	    .t_end = t_end,
	    .align_bytes = align_bytes > PLAN_GRANULE_BYTES ? align_bytes : PLAN_GRANULE_BYTES,
	};
}

/* Re-plans entries[0..n) in place (entry order). */
static int plan_entries(struct plan_entry *entries, uint64_t n, const struct planner_options *opt,
			struct plan_image_record *rec)
{
	struct block *blocks;
	int r;

	blocks = calloc(n ? n : 1, sizeof(*blocks));
	if (!blocks)
		return -ENOMEM;
	for (uint64_t i = 0; i < n; i++) {
		const struct plan_entry *e = &entries[i];
		blocks[i] = block_of(e->size_bytes, e->align_bytes, e->t_start, e->t_end,
				     e->in_place_of != 0);
	}
	r = pack_blocks(blocks, n, opt, rec);
	if (r == 0)
		for (uint64_t i = 0; i < n; i++)
			entries[i].offset_bytes =
			    entries[i].in_place_of ? blocks[entries[i].in_place_of - 1].offset_bytes
						   : blocks[i].offset_bytes;
	free(blocks);
	return r;
}

int plan_builder_replan(struct plan_image *image, const struct planner_options *opt,
			struct plan_entry **entries_out)
{
	uint64_t n = image->record.entry_count;
	struct plan_entry *entries;
	int r;

	/* An in-place entry must continue a block of its own (not another
	 * continuation), as the builder makes them; the reader checked only bounds. */
	for (uint64_t i = 0; i < n; i++)
		if (image->entries[i].in_place_of &&
		    image->entries[image->entries[i].in_place_of - 1].in_place_of)
			return -EINVAL;

	entries = malloc((n ? n : 1) * sizeof(*entries));
	if (!entries)
		return -ENOMEM;
	if (n)
		memcpy(entries, image->entries, n * sizeof(*entries));
	r = plan_entries(entries, n, opt, &image->record);
	if (r < 0) {
		free(entries);
		return r;
	}
	image->entries = entries;
	*entries_out = entries;
	return 0;
}
