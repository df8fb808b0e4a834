/* A recording planned as it goes, see recording.h. */
#define _GNU_SOURCE /* mremap */
#include "recording.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "plan_builder.h"

#define NO_LIVE UINT32_MAX
/* Per-site entry tables up to this size live on the heap; bigger ones get their own
 * mapping, which mremap grows without copying (a site of millions of entries). */
#define MAPPED_TABLE_BYTES (UINT64_C(1) << 20)

static uint64_t granules_of(uint64_t bytes)
{
	return (bytes + PLAN_GRANULE_BYTES - 1) / PLAN_GRANULE_BYTES;
}

/* Grows a table from old_bytes to new_bytes (both 0 or more), keeping its content. */
static void *grow_table(void *table, uint64_t old_bytes, uint64_t new_bytes)
{
	void *p;

	if (new_bytes < MAPPED_TABLE_BYTES)
		return realloc(table, new_bytes);
	if (old_bytes >= MAPPED_TABLE_BYTES) {
		p = mremap(table, old_bytes, new_bytes, MREMAP_MAYMOVE);
		return p == MAP_FAILED ? NULL : p;
	}
	p = mmap(NULL, new_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	if (old_bytes)
		memcpy(p, table, old_bytes);
	free(table);
	return p;
}

static void free_table(void *table, uint64_t bytes)
{
	if (bytes >= MAPPED_TABLE_BYTES)
		munmap(table, bytes);
	else
		free(table);
}

int recording_init(struct recording *rec)
{
	memset(rec, 0, sizeof(*rec));
	rec->live_free = NO_LIVE;
	offset_allocator_init(&rec->offsets, PLAN_GRANULE_BYTES);
	return addr_map_init(&rec->by_address, 4096);
}

void recording_fini(struct recording *rec)
{
	for (uint32_t s = 0; s < rec->site_count; s++)
		free_table(rec->sites[s].entries,
			   rec->sites[s].capacity * sizeof(struct plan_entry));
	free(rec->sites);
	free(rec->live);
	free(rec->in_place);
	addr_map_fini(&rec->by_address);
	offset_allocator_fini(&rec->offsets);
	memset(rec, 0, sizeof(*rec));
}

int recording_add_site(struct recording *rec)
{
	if (rec->site_count == rec->site_capacity) {
		uint32_t cap = rec->site_capacity ? 2 * rec->site_capacity : 64;
		struct recording_site *grown = realloc(rec->sites, cap * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		rec->sites = grown;
		rec->site_capacity = cap;
	}
	rec->sites[rec->site_count++] = (struct recording_site){0};
	return 0;
}

static struct plan_entry *entry_of(const struct recording *rec, struct recording_ref ref)
{
	return &rec->sites[ref.site].entries[ref.occurrence];
}

/* The site's next entry, made room for; NULL on ENOMEM. Not counted yet. */
static struct plan_entry *next_entry(struct recording *rec, uint32_t site)
{
	struct recording_site *s = &rec->sites[site];

	if (s->count == s->capacity) {
		uint64_t cap = s->capacity ? 2 * s->capacity : 16;
		void *grown = grow_table(s->entries, s->capacity * sizeof(*s->entries),
					 cap * sizeof(*s->entries));
		if (!grown)
			return NULL;
		s->entries = grown;
		s->capacity = cap;
	}
	return &s->entries[s->count];
}

static uint32_t live_take(struct recording *rec)
{
	uint32_t i = rec->live_free;

	if (i != NO_LIVE) {
		rec->live_free = rec->live[i].range;
		return i;
	}
	if (rec->live_used == rec->live_capacity) {
		uint32_t cap = rec->live_capacity ? 2 * rec->live_capacity : 4096;
		struct recording_live *grown;
		if (cap <= rec->live_capacity) /* 2^32 blocks alive at once */
			return NO_LIVE;
		grown = realloc(rec->live, (size_t)cap * sizeof(*grown));
		if (!grown)
			return NO_LIVE;
		rec->live = grown;
		rec->live_capacity = cap;
	}
	return rec->live_used++;
}

static void live_give(struct recording *rec, uint32_t i)
{
	rec->live[i].range = rec->live_free;
	rec->live_free = i;
}

/* Ends the block of live slot i at the current tick: its current entry, and the
 * entry whose range it is (whose lifetime covers its in-place reallocs). */
static void end_block(struct recording *rec, uint32_t i)
{
	struct recording_live *b = &rec->live[i];
	uint64_t t = rec->clock++;

	entry_of(rec, b->current)->t_end = t;
	entry_of(rec, b->root)->t_end = t;
	offset_allocator_give(&rec->offsets, b->range);
	rec->live_bytes -= b->granules * PLAN_GRANULE_BYTES;
	live_give(rec, i);
}

/* Records a new block with a range of its own; returns its live slot or NO_LIVE. */
static uint32_t new_block(struct recording *rec, uint32_t site, uint64_t size, uint64_t align)
{
	uint64_t granules = granules_of(size), offset;
	struct plan_entry *e = next_entry(rec, site);
	uint32_t i = e ? live_take(rec) : NO_LIVE;
	uint32_t range;

	if (i == NO_LIVE)
		return NO_LIVE;
	range = offset_allocator_take(&rec->offsets, granules * PLAN_GRANULE_BYTES,
				      align > PLAN_GRANULE_BYTES ? align : PLAN_GRANULE_BYTES,
				      &offset);
	if (range == OFFSET_ALLOCATOR_NONE) {
		live_give(rec, i);
		return NO_LIVE;
	}
	struct recording_ref ref = {site, rec->sites[site].count++};
	*e = (struct plan_entry){
	    .site = site,
	    .occurrence = (uint32_t)ref.occurrence,
	    .size_bytes = size,
	    .offset_bytes = offset,
	    .t_start = rec->clock++,
	    .t_end = PLAN_T_INFINITY,
	    .align_bytes = (uint32_t)align,
	};
	rec->live[i] = (struct recording_live){ref, ref, granules, range};
	rec->entry_count++;
	rec->live_bytes += granules * PLAN_GRANULE_BYTES;
	if (rec->live_bytes > rec->peak_bytes)
		rec->peak_bytes = rec->live_bytes;
	return i;
}

int recording_alloc(struct recording *rec, uint64_t address, uint32_t site, uint64_t size,
		    uint64_t align)
{
	uint32_t i;

	if (site >= rec->site_count || !size || !address || !align || (align & (align - 1)) ||
	    align > PLAN_MAX_ALIGN_BYTES || rec->sites[site].count >= UINT32_MAX)
		return -EINVAL;
	i = new_block(rec, site, size, align);
	if (i == NO_LIVE)
		return -ENOMEM;
	if (addr_map_put(&rec->by_address, address, i) < 0) {
		end_block(rec, i); /* recorded as a block freed at once */
		return -ENOMEM;
	}
	return 0;
}

void recording_free(struct recording *rec, uint64_t address)
{
	uint64_t i;

	if (address && addr_map_remove(&rec->by_address, address, &i))
		end_block(rec, (uint32_t)i);
}

uint64_t recording_realloc_begin(struct recording *rec, uint64_t old)
{
	uint64_t i;

	if (old && addr_map_remove(&rec->by_address, old, &i))
		return i;
	return RECORDING_NO_TOKEN;
}

/* The realloc stays in its block: a new entry at the same offset, taking no space. */
static int continue_in_place(struct recording *rec, uint32_t i, uint64_t size, uint32_t site)
{
	struct recording_live *b = &rec->live[i];
	struct plan_entry *e = next_entry(rec, site);

	if (!e)
		return -ENOMEM;
	if (rec->in_place_count == rec->in_place_capacity) {
		uint64_t cap = rec->in_place_capacity ? 2 * rec->in_place_capacity : 1024;
		struct recording_in_place *grown = realloc(rec->in_place, cap * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		rec->in_place = grown;
		rec->in_place_capacity = cap;
	}
	struct recording_ref ref = {site, rec->sites[site].count++};
	*e = (struct plan_entry){
	    .site = site,
	    .occurrence = (uint32_t)ref.occurrence,
	    .size_bytes = size,
	    .offset_bytes = entry_of(rec, b->root)->offset_bytes,
	    .t_start = rec->clock++,
	    .t_end = PLAN_T_INFINITY,
	    .align_bytes = 1,
	};
	rec->in_place[rec->in_place_count++] = (struct recording_in_place){ref, b->root};
	rec->entry_count++;
	/* The entry it replaces ends now, unless it is the block's own entry, whose
	 * lifetime is the block's and goes on. */
	if (b->current.site != b->root.site || b->current.occurrence != b->root.occurrence)
		entry_of(rec, b->current)->t_end = rec->clock;
	rec->clock++;
	b->current = ref;
	return 0;
}

void recording_realloc_done(struct recording *rec, uint64_t token, uint64_t old,
			    uint64_t address, uint64_t size, uint32_t site)
{
	uint32_t i = (uint32_t)token;

	if (!address) {
		if (token != RECORDING_NO_TOKEN &&
		    addr_map_put(&rec->by_address, old, token) < 0)
			end_block(rec, i);
		return;
	}
	if (token == RECORDING_NO_TOKEN) {
		if (site != RECORDING_NO_SITE)
			recording_alloc(rec, address, site, size, 1);
		return;
	}
	if (site < rec->site_count && size && rec->sites[site].count < UINT32_MAX &&
	    granules_of(size) <= rec->live[i].granules &&
	    continue_in_place(rec, i, size, site) == 0) {
		if (addr_map_put(&rec->by_address, address, i) < 0)
			end_block(rec, i);
		return;
	}
	/* It moves: the new block starts, then the old one ends. */
	if (site != RECORDING_NO_SITE)
		recording_alloc(rec, address, site, size, 1);
	end_block(rec, i);
}

/* Packs the entries again with the planner proper when that gives a smaller arena. */
static int improve(struct plan_image *image, const struct planner_options *opt,
		   struct plan_entry **entries)
{
	struct plan_image trial = *image;
	struct plan_entry *replanned;
	int r;

	r = plan_builder_replan(&trial, opt, &replanned);
	if (r < 0)
		return r;
	if (trial.record.arena_bytes < image->record.arena_bytes) {
		free(*entries);
		*entries = replanned;
		image->entries = replanned;
		image->record.arena_bytes = trial.record.arena_bytes;
	} else {
		free(replanned);
	}
	return 0;
}

int recording_build(const struct recording *rec, struct plan_image *image,
		    const struct planner_options *opt, struct plan_site **sites_out,
		    struct plan_entry **entries_out)
{
	uint64_t n = rec->entry_count, first = 0;
	struct plan_site *sites;
	struct plan_entry *entries;
	int r;

	if (image->record.site_count != rec->site_count)
		return -EINVAL;
	sites = malloc((rec->site_count ? rec->site_count : 1) * sizeof(*sites));
	entries = malloc((n ? n : 1) * sizeof(*entries));
	if (!sites || !entries) {
		free(sites);
		free(entries);
		return -ENOMEM;
	}
	for (uint32_t s = 0; s < rec->site_count; s++) {
		const struct recording_site *rs = &rec->sites[s];
		sites[s] = image->sites[s];
		sites[s].first_entry = first;
		sites[s].entry_count = rs->count;
		if (rs->count)
			memcpy(entries + first, rs->entries, rs->count * sizeof(*entries));
		first += rs->count;
	}
	for (uint64_t k = 0; k < rec->in_place_count; k++) {
		const struct recording_in_place *ip = &rec->in_place[k];
		entries[sites[ip->entry.site].first_entry + ip->entry.occurrence].in_place_of =
		    sites[ip->root.site].first_entry + ip->root.occurrence + 1;
	}
	image->sites = sites;
	image->entries = entries;
	image->record.entry_count = n;
	image->record.arena_bytes = offset_allocator_high_water(&rec->offsets);
	image->record.lower_bound_bytes = rec->peak_bytes;
	r = 0;
	if (opt && image->record.arena_bytes > image->record.lower_bound_bytes &&
	    (double)n <= opt->time_limit_s * PLANNER_BLOCKS_PER_SECOND)
		r = improve(image, opt, &entries);
	if (r < 0) {
		free(sites);
		free(entries);
		return r;
	}
	*sites_out = sites;
	*entries_out = entries;
	return 0;
}
