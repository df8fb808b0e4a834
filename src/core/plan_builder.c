/* Recording -> plan image. See plan_builder.h. */
#include "plan_builder.h"

#include "event_packer.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* The planner's first heuristic costs about a microsecond per block. At exit of a
 * recording, within a budget of S seconds, it is worth running only on traces of
 * up to S times this many blocks; bigger ones keep the event packer's plan until
 * `memplan plan` re-plans them offline. */
#define PLANNER_BLOCKS_PER_SECOND 500000.0

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

/* Packs blocks[0..n): the event packer always (it is linear and gives the lower
 * bound), then the planner proper if the budget allows, or always if asked; the
 * smaller arena wins. Sets the record's arena and lower bound. */
static int pack_blocks(struct block *blocks, uint64_t n, const struct planner_options *opt,
		       bool always_improve, struct plan_image_record *rec)
{
	uint64_t arena_bytes, lower_bound_bytes;
	int r;

	r = event_packer_pack(blocks, (size_t)n, &arena_bytes, &lower_bound_bytes);
	if (r == 0 && arena_bytes > lower_bound_bytes && opt &&
	    (always_improve || (double)n <= opt->time_limit_s * PLANNER_BLOCKS_PER_SECOND))
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
	r = pack_blocks(blocks, n, opt, true, rec);
	if (r == 0)
		for (uint64_t i = 0; i < n; i++)
			entries[i].offset_bytes =
			    entries[i].in_place_of ? blocks[entries[i].in_place_of - 1].offset_bytes
						   : blocks[i].offset_bytes;
	free(blocks);
	return r;
}

static uint64_t granules(uint64_t bytes)
{
	return (bytes + PLAN_GRANULE_BYTES - 1) / PLAN_GRANULE_BYTES;
}

static int check_alloc(const struct recorded_alloc *a, uint32_t site_count)
{
	if (a->site >= site_count || a->t_end <= a->t_start || !a->size_bytes)
		return -EINVAL;
	if (!a->align_bytes || (a->align_bytes & (a->align_bytes - 1)) ||
	    a->align_bytes > PLAN_MAX_ALIGN_BYTES)
		return -EINVAL;
	return 0;
}

int plan_builder_build(struct plan_image *image, const struct recorded_alloc *allocs,
		       uint64_t alloc_count, const struct planner_options *opt,
		       struct plan_site **sites_out, struct plan_entry **entries_out)
{
	uint32_t site_count = image->record.site_count;
	struct plan_site *sites;
	struct plan_entry *entries;
	uint64_t *next;				    /* per site: where its next entry goes */
	uint64_t *entry_of = NULL, *root_of = NULL; /* per alloc: its entry, its chain root */
	struct block *blocks = NULL;
	int r = -ENOMEM;

	for (uint64_t i = 0; i < alloc_count; i++)
		if (check_alloc(&allocs[i], site_count) < 0 ||
		    (allocs[i].realloc_of != RECORDED_NOT_REALLOC && allocs[i].realloc_of >= i))
			return -EINVAL;

	sites = malloc((site_count ? site_count : 1) * sizeof(*sites));
	entries = malloc((alloc_count ? alloc_count : 1) * sizeof(*entries));
	next = calloc(site_count ? site_count : 1, sizeof(*next));
	entry_of = malloc((alloc_count ? alloc_count : 1) * sizeof(*entry_of));
	root_of = malloc((alloc_count ? alloc_count : 1) * sizeof(*root_of));
	blocks = malloc((alloc_count ? alloc_count : 1) * sizeof(*blocks));
	if (!sites || !entries || !next || !entry_of || !root_of || !blocks)
		goto err_free;

	/* Counting sort by site; stable, so occurrence order is allocation order. */
	if (site_count)
		memcpy(sites, image->sites, site_count * sizeof(*sites));
	for (uint32_t s = 0; s < site_count; s++)
		sites[s].entry_count = 0;
	for (uint64_t i = 0; i < alloc_count; i++)
		sites[allocs[i].site].entry_count++;
	uint64_t first = 0;
	for (uint32_t s = 0; s < site_count; s++) {
		sites[s].first_entry = first;
		next[s] = first;
		first += sites[s].entry_count;
	}
	/* Blocks in allocation order: the packer then walks them mostly in order. */
	for (uint64_t i = 0; i < alloc_count; i++) {
		const struct recorded_alloc *a = &allocs[i];
		/* A realloc that fits the block it came from stays there in replay
		 * (the block's size is its root's, rounded to granules). */
		root_of[i] = i;
		if (a->realloc_of != RECORDED_NOT_REALLOC &&
		    granules(a->size_bytes) <= granules(allocs[root_of[a->realloc_of]].size_bytes))
			root_of[i] = root_of[a->realloc_of];
		blocks[i] =
		    block_of(a->size_bytes, a->align_bytes, a->t_start, a->t_end, root_of[i] != i);
		if (root_of[i] != i && a->t_end > blocks[root_of[i]].t_end)
			blocks[root_of[i]].t_end = a->t_end;
	}
	r = pack_blocks(blocks, alloc_count, opt, false, &image->record);
	if (r < 0)
		goto err_free;

	for (uint64_t i = 0; i < alloc_count; i++) {
		const struct recorded_alloc *a = &allocs[i];
		uint64_t at = next[a->site]++, root = root_of[i];
		entry_of[i] = at;
		entries[at] = (struct plan_entry){
		    .site = a->site,
		    .occurrence = (uint32_t)(at - sites[a->site].first_entry),
		    .size_bytes = a->size_bytes,
		    .offset_bytes = blocks[root].offset_bytes,
		    .t_start = a->t_start,
		    .t_end = root == i ? blocks[i].t_end : a->t_end,
		    .align_bytes = a->align_bytes,
		    .in_place_of = root == i ? 0 : entry_of[root] + 1,
		};
	}

	free(blocks);
	free(root_of);
	free(entry_of);
	free(next);
	image->record.entry_count = alloc_count;
	image->sites = sites;
	image->entries = entries;
	*sites_out = sites;
	*entries_out = entries;
	return 0;

err_free:
	free(blocks);
	free(root_of);
	free(entry_of);
	free(next);
	free(entries);
	free(sites);
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
