/* A recording planned as it goes, see recording.h. */
#define _GNU_SOURCE /* mremap */
#include "recording.h"

#include <errno.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "cache_aligned.h"
#include "entry_codec.h"
#include "plan_builder.h"

#define NO_LIVE	    UINT32_MAX
#define NO_IN_PLACE UINT32_MAX
/* A handle holds the live slot, and the lane and range in RANGE_BITS bits. */
#define RANGE_BITS 26
#define RANGE_MASK ((UINT32_C(1) << RANGE_BITS) - 1)
/* The log up to this size lives on the heap; bigger, it gets its own mapping,
 * which mremap grows without copying (millions of entries). */
#define MAPPED_TABLE_BYTES (UINT64_C(1) << 20)

/* Read at random; cache_aligned.h keeps the table on cache lines. */
_Static_assert(sizeof(struct recording_live) == 40, "a live slot's layout");

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
	rec->lanes = calloc(RECORDING_LANES, sizeof(*rec->lanes));
	if (!rec->lanes)
		return -ENOMEM;
	return addr_map_init(&rec->by_address, 4096);
}

void recording_fini(struct recording *rec)
{
	for (uint32_t s = 0; s < rec->site_count; s++) {
		free_table(rec->sites[s].ended,
			   rec->sites[s].ended_capacity * sizeof(*rec->sites[s].ended));
		free(rec->sites[s].bands);
		free(rec->sites[s].pools);
		free(rec->sites[s].chunks);
	}
	free(rec->sites);
	free(rec->live);
	free(rec->in_place);
	free(rec->aligned);
	addr_map_fini(&rec->by_address);
	for (uint32_t l = 0; l < rec->lane_count; l++)
		offset_allocator_fini(&rec->lanes[l].offsets);
	free(rec->lanes);
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

/* The alive_from of a lane none of whose threads was noted. */
#define NOT_NOTED UINT64_MAX

/* Lanes are made on first use, all up to the one asked for. */
static void lanes_up_to(struct recording *rec, uint32_t lane)
{
	while (rec->lane_count <= lane) {
		struct recording_lane *l = &rec->lanes[rec->lane_count++];
		*l = (struct recording_lane){.max_align = PLAN_GRANULE_BYTES,
					     .alive_from = NOT_NOTED};
		offset_allocator_init(&l->offsets, PLAN_GRANULE_BYTES);
	}
}

void recording_thread_begins(struct recording *rec, uint32_t lane, uint64_t since)
{
	struct recording_lane *l;

	lane %= RECORDING_LANES;
	lanes_up_to(rec, lane);
	l = &rec->lanes[lane];
	if (since < l->alive_from)
		l->alive_from = since;
	l->threads++;
}

void recording_thread_ends(struct recording *rec, uint32_t lane)
{
	struct recording_lane *l = &rec->lanes[lane % RECORDING_LANES];

	if (lane % RECORDING_LANES < rec->lane_count && l->threads && !--l->threads)
		l->alive_to = rec->clock;
}

int recording_site_lane(struct recording *rec, uint32_t site, uint32_t lane)
{
	if (site >= rec->site_count)
		return -EINVAL;
	if (!rec->sites[site].count)
		rec->sites[site].lane = lane % RECORDING_LANES;
	return 0;
}

/* Grows a side list of elem-byte records so that one more fits. */
static bool side_room(void **list, uint64_t count, uint64_t *capacity, size_t elem)
{
	if (count < *capacity)
		return true;
	uint64_t cap = *capacity ? 2 * *capacity : 1024;
	void *grown = realloc(*list, cap * elem);
	if (!grown)
		return false;
	*list = grown;
	*capacity = cap;
	return true;
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
		grown = cache_aligned_grow(rec->live, (size_t)rec->live_capacity * sizeof(*grown),
					   (size_t)cap * sizeof(*grown));
		if (!grown)
			return NO_LIVE;
		rec->live = grown;
		rec->live_capacity = cap;
	}
	return rec->live_used++;
}

static void live_give(struct recording *rec, uint32_t i)
{
	rec->live[i].site = RECORDING_NO_SITE;
	rec->live[i].range = rec->live_free;
	rec->live_free = i;
}

/* What the address map holds for a block: its live slot, lane and range (or
 * pool), so that all can be loaded at once when it ends. Never
 * RECORDING_NO_TOKEN: live slots stay below 2^31. */
static uint64_t handle_of(uint32_t i, uint32_t lane, uint32_t range)
{
	return (uint64_t)(lane << RANGE_BITS | range) << 32 | i;
}

static struct offset_allocator *lane_of_handle(struct recording *rec, uint64_t h)
{
	return &rec->lanes[h >> (32 + RANGE_BITS)].offsets;
}

/* The requested bytes and blocks of site s change by the deltas: the image's
 * requested bytes too, and a new peak is noted. A site notes its bytes as they
 * were at the last peak the first time it changes after it (peak_gen), so that
 * at the end each site's bytes at the peak are known without going back. */
static void note_requested(struct recording *rec, uint32_t s, int64_t bytes, int32_t blocks)
{
	struct recording_site *site = &rec->sites[s];

	if (site->peak_gen != rec->peak_gen) {
		site->peak_requested = site->live_requested;
		site->peak_blocks = site->live_blocks;
		site->peak_gen = rec->peak_gen;
	}
	site->live_requested += (uint64_t)bytes;
	site->live_blocks += (uint32_t)blocks;
	rec->live_requested += (uint64_t)bytes;
	if (rec->live_requested > rec->peak_requested) {
		rec->peak_requested = rec->live_requested;
		rec->peak_time = rec->clock;
		rec->peak_gen++;
	}
	if (site->live_blocks > site->max_live)
		site->max_live = site->live_blocks;
}

/* The granule bytes live, for the lower bound, in the image and in a lane. */
static void note_granules(struct recording *rec, uint32_t lane, int64_t bytes)
{
	struct recording_lane *l = &rec->lanes[lane];

	rec->live_bytes += (uint64_t)bytes;
	if (rec->live_bytes > rec->peak_bytes)
		rec->peak_bytes = rec->live_bytes;
	l->live_bytes += (uint64_t)bytes;
	if (l->live_bytes > l->peak_bytes)
		l->peak_bytes = l->live_bytes;
}

/* The band of a block of size bytes (recording.h). */
static uint32_t band_of(uint64_t size)
{
	if (size <= 256)
		return size ? (uint32_t)((size - 1) / 16) : 0;
	uint32_t e = 63u - (uint32_t)__builtin_clzll(size - 1); /* 2^e < size <= 2^(e+1) */
	uint32_t b = e < 12 ? 16 + 8 * (e - 8) + (uint32_t)((size - 1) >> (e - 3) & 7)
			    : 48 + 4 * (e - 12) + (uint32_t)((size - 1) >> (e - 2) & 3);
	return b < RECORDING_BANDS ? b : RECORDING_BANDS - 1;
}

/* A block of size bytes of the site starts or ends (delta +1 or -1): the suffix
 * counts of its band and all smaller ones change. Only while the site is not
 * folded: the tallies decide its pools when it folds. */
static void tally(struct recording_site *site, uint64_t size, int delta)
{
	uint32_t b = band_of(size);

	if (site->folded)
		return;
	if (b >= site->band_count) {
		struct recording_band *grown = realloc(site->bands, (b + 1) * sizeof(*grown));
		if (!grown)
			return; /* the pools may come out too small: misses, later */
		memset(&grown[site->band_count], 0, (b + 1 - site->band_count) * sizeof(*grown));
		site->bands = grown;
		site->band_count = b + 1;
	}
	if (delta > 0) {
		if (size > site->bands[b].max_size)
			site->bands[b].max_size = size;
		for (uint32_t j = 0; j <= b; j++)
			if (++site->bands[j].suffix_live > site->bands[j].suffix_max)
				site->bands[j].suffix_max = site->bands[j].suffix_live;
	} else {
		for (uint32_t j = 0; j <= b; j++)
			if (site->bands[j].suffix_live)
				site->bands[j].suffix_live--;
	}
}

/* Makes a pool of slots of slot_bytes, aligned to align, for target slots (0:
 * not known), with no slot yet, for site s. A pool keeps its index (live blocks
 * name it); the site's order lists them by slot size. Returns its index or
 * UINT32_MAX (out of memory, or RECORDING_POOLS_MAX pools). */
static uint32_t pool_make(struct recording *rec, uint32_t s, uint64_t slot_bytes, uint32_t align,
			  uint32_t target)
{
	struct recording_site *site = &rec->sites[s];
	uint32_t at, index = site->pool_count;

	slot_bytes = (slot_bytes + align - 1) / align * align;
	if (index >= RECORDING_POOLS_MAX || slot_bytes > (UINT64_C(1) << 40))
		return UINT32_MAX;
	if (!site->pools && !(site->pools = calloc(RECORDING_POOLS_MAX, sizeof(*site->pools))))
		return UINT32_MAX;
	site->pools[index] = (struct recording_pool){
	    .slot_bytes = slot_bytes,
	    .align = align,
	    .target = target,
	};
	for (at = index; at && site->pools[site->order[at - 1]].slot_bytes > slot_bytes; at--)
		site->order[at] = site->order[at - 1];
	site->order[at] = (uint8_t)index;
	site->pool_count++;
	return index;
}

/* Reserves slots more slots for pool i of site s, now, in the site's lane.
 * Returns false if it cannot (out of memory, or RECORDING_CHUNKS_MAX chunks). */
static bool pool_grow(struct recording *rec, uint32_t s, uint32_t i, uint32_t slots)
{
	struct recording_site *site = &rec->sites[s];
	struct recording_pool *p = &site->pools[i];
	struct recording_lane *l;
	uint64_t offset;
	uint32_t range;

	if (!slots || site->chunk_count >= RECORDING_CHUNKS_MAX ||
	    slots > (UINT64_C(1) << 40) / p->slot_bytes || p->capacity > UINT32_MAX - slots)
		return false;
	if (site->chunk_count == site->chunk_capacity) {
		uint32_t cap = site->chunk_capacity ? 2 * site->chunk_capacity : 4;
		struct recording_chunk *grown = realloc(site->chunks, cap * sizeof(*grown));
		if (!grown)
			return false;
		site->chunks = grown;
		site->chunk_capacity = cap;
	}
	lanes_up_to(rec, site->lane);
	l = &rec->lanes[site->lane];
	range = offset_allocator_take(&l->offsets, p->slot_bytes * slots, p->align, &offset);
	if (range == OFFSET_ALLOCATOR_NONE)
		return false;
	if (p->align > l->max_align)
		l->max_align = p->align;
	site->chunks[site->chunk_count++] =
	    (struct recording_chunk){.t_start = rec->clock,
				     .pool = i,
				     .slots = slots,
				     .range = range,
				     .occurrence = (uint32_t)site->count};
	p->capacity += slots;
	return true;
}

/* A pool to be: slots for a band or a group of neighbouring bands. */
struct band_group {
	uint64_t slot_bytes; /* its largest block, in whole granules */
	uint32_t slots;
};

/* Pools at most for a site's bands at first; more bands are grouped. */
#define INITIAL_POOLS_MAX 20u

/* Makes the site's pools, now, from its tallies. A block of a band may take
 * any slot at least as big (the replay policy: the tightest pool with a slot
 * free), so a band needs as many slots as the most blocks of it and bigger ones
 * ever alive at once, less those the bigger bands' slots provide: the
 * differences of its suffix maxima, which add up to the most blocks the site
 * ever had alive. That count is a pool's target; each slot is as big as its
 * band's biggest block. Neighbouring bands are grouped, least wasteful first,
 * down to INITIAL_POOLS_MAX. Slots come in chunks as the blocks need them
 * (pool_for). A site in a steady state also gets an overflow pool, its slots
 * a quarter bigger than the biggest and an eighth as many, reserved at once:
 * replay serves a somewhat longer string or line than any recorded there. A
 * site folded while its blocks still pile up has no targets (the counts would
 * only say how many piled up in its window). A site with no tallies gets its
 * pools as it needs them. */
static void pools_from_tallies(struct recording *rec, uint32_t s, bool steady)
{
	struct recording_site *site = &rec->sites[s];
	struct band_group groups[RECORDING_BANDS];
	uint32_t n = 0;

	for (uint32_t b = 0; b < site->band_count; b++) {
		const struct recording_band *band = &site->bands[b];
		uint32_t above = b + 1 < site->band_count ? site->bands[b + 1].suffix_max : 0;
		if (!band->max_size || band->suffix_max <= above)
			continue;
		groups[n++] = (struct band_group){
		    plan_class_bytes(plan_size_class(band->max_size)), band->suffix_max - above};
	}
	while (n > INITIAL_POOLS_MAX) {
		uint32_t best = 0;
		uint64_t best_cost = UINT64_MAX;
		for (uint32_t i = 0; i + 1 < n; i++) {
			uint64_t waste = groups[i].slots * (groups[i + 1].slot_bytes -
							    groups[i].slot_bytes);
			if (waste < best_cost) {
				best_cost = waste;
				best = i;
			}
		}
		groups[best + 1].slots += groups[best].slots;
		memmove(&groups[best], &groups[best + 1], (n - best - 1) * sizeof(groups[0]));
		n--;
	}
	for (uint32_t i = 0; i < n; i++)
		pool_make(rec, s, groups[i].slot_bytes, site->max_align, steady ? groups[i].slots : 0);
	if (steady && n) {
		uint64_t top = groups[n - 1].slot_bytes;
		uint32_t slots = groups[n - 1].slots / 8 > 4 ? groups[n - 1].slots / 8 : 4;
		uint32_t i = pool_make(rec, s, plan_class_bytes(plan_size_class(top + top / 4)),
				       site->max_align, slots);
		if (i != UINT32_MAX)
			pool_grow(rec, s, i, slots);
	}
}

/* Folds site s, steady or not: its occurrences from now on have no entry, only a
 * pool slot. */
static void fold(struct recording *rec, uint32_t s, bool steady)
{
	struct recording_site *site = &rec->sites[s];

	if (site->folded)
		return;
	site->exact = site->count;
	pools_from_tallies(rec, s, steady);
	site->folded = true;
	free(site->bands); /* a folded site's pools grow by what they see */
	site->bands = NULL;
	site->band_count = 0;
}

/* Whether the site's next block is folded: it is folded already, or its window
 * is full, or the image's. */
static bool folds_now(struct recording *rec, uint32_t s)
{
	struct recording_site *site = &rec->sites[s];

	if (site->folded)
		return true;
	if (rec->entry_count >= RECORDING_EXACT_MAX) {
		fold(rec, s, false);
	} else if (site->count >= site->next_check) {
		/* A steady state: its peak stopped growing, and it reuses its memory. */
		bool steady = site->max_live <= site->live_mark + site->live_mark / 4 &&
			      site->count >= RECORDING_STEADY_REUSE * (uint64_t)site->max_live;
		if (site->count >= RECORDING_WINDOW_MAX || (site->count >= RECORDING_WINDOW && steady))
			fold(rec, s, steady);
		site->live_mark = site->max_live;
		site->next_check = site->next_check ? 2 * site->next_check : RECORDING_WINDOW / 2;
	}
	return site->folded;
}

/* The fewest slots a pool grows by: 4, or as many as make 64 KiB for bigger
 * slots, at least 1. A buffer grown by realloc moves through a pool of each
 * size class, one block in each at a time: with 4 slots everywhere, a string
 * grown to 600 KB had 13 pools of 4 slots, an arena 9.6 times its lower
 * bound (2.5 now). */
static uint32_t pool_growth_min(const struct recording_pool *p)
{
	const uint64_t fill = UINT64_C(64) << 10;

	return p->slot_bytes >= fill	  ? 1
	       : p->slot_bytes > fill / 4 ? (uint32_t)(fill / p->slot_bytes)
					  : 4;
}

/* How many slots pool p grows by when it is full: a quarter of its target at a
 * time up to its target, so that it ends less than a quarter of that above
 * what its blocks needed; past it (or with no target), an eighth of what it
 * has, at least pool_growth_min: a pool that keeps growing takes a few dozen
 * chunks, and its last one is at most an eighth too big (with a quarter,
 * bench-churn 3000000's arena was 18.7 MiB, with an eighth 17.7, for 16.2 live
 * at most; with a sixteenth its table site ran out of chunks). */
static uint32_t pool_growth(const struct recording_site *site, const struct recording_pool *p)
{
	const uint32_t least = pool_growth_min(p);

	if (p->capacity < p->target)
		return (p->target + 3) / 4;
	/* A site whose blocks pile up in many pools used up its chunks growing
	 * by an eighth: 20 pools of a table of many sizes stopped at about
	 * 100,000 slots with 1,024 chunks, and the rest of its blocks went
	 * unplanned (57% served on the same command, its arena 0.6 times its
	 * lower bound). With four times the chunks, its last ones grow by a
	 * quarter, then by half: a pool then reaches 2^32 slots. */
	const unsigned shift = site->chunk_count < RECORDING_CHUNKS_MAX / 4 * 3	  ? 3
			       : site->chunk_count < RECORDING_CHUNKS_MAX / 8 * 7 ? 2
										  : 1;
	return p->capacity >> shift > least ? p->capacity >> shift : least;
}

/* The pool a folded block of size bytes aligned to align takes, as replay would
 * serve it: the tightest that fits it and has a slot free, where a pool below
 * its target counts as having one (its chunk opens as the block comes, in
 * replay too: its blocks would not spill into bigger slots while it fills). So
 * the tightest pool that fits grows up to its target; past that, blocks spill
 * into bigger pools with a slot free, and only if none has, the tightest
 * grows. A pool with no target (its site folded while its blocks piled up)
 * always grows: spilling, a table of small blocks filled the slots of its
 * biggest ones (bench-churn 8000000: a pool of 57,377 slots of 512 bytes for
 * blocks of 264 on average, the arena 2.4 times its lower bound). If none
 * fits, a pool of slots a quarter bigger than the block is made. UINT32_MAX
 * if no slot can be had. */
static uint32_t pool_for(struct recording *rec, uint32_t s, uint64_t size, uint64_t align)
{
	struct recording_site *site = &rec->sites[s];
	uint32_t tightest = UINT32_MAX;

	for (uint32_t k = 0; k < site->pool_count; k++) {
		uint32_t i = site->order[k];
		struct recording_pool *p = &site->pools[i];
		if (p->slot_bytes < size || p->align < align)
			continue;
		if (p->live < p->capacity)
			return i;
		if (tightest == UINT32_MAX) {
			if (p->capacity < p->target || !p->target)
				return pool_grow(rec, s, i, pool_growth(site, p)) ? i : UINT32_MAX;
			tightest = i;
		}
	}
	if (tightest == UINT32_MAX) {
		uint32_t a = (uint32_t)(align > site->max_align ? align : site->max_align);
		tightest = pool_make(rec, s, plan_class_bytes(plan_size_class(size + size / 4)), a, 0);
		if (tightest == UINT32_MAX)
			return tightest;
	}
	return pool_grow(rec, s, tightest, pool_growth(site, &site->pools[tightest])) ? tightest
										      : UINT32_MAX;
}

/* A folded block is its handle in the address map, with no live slot, so that
 * the steady state of a long run touches little memory per event: bit 31 set
 * (a live slot's index stays below 2^31), its site in bits 0-23, its pool in
 * bits 24-28 (FOLDED_NO_POOL: none), its size in bits 32-63. */
#define FOLDED_BIT     (UINT64_C(1) << 31)
#define FOLDED_NO_POOL 31u
#define FOLDED_SITES   (UINT32_C(1) << 24)

static bool is_folded(uint64_t h)
{
	return h & FOLDED_BIT;
}

static uint64_t folded_handle(uint32_t site, uint32_t pool, uint64_t size)
{
	return size << 32 | FOLDED_BIT | (uint64_t)(pool < FOLDED_NO_POOL ? pool : FOLDED_NO_POOL) << 24 |
	       site;
}

static uint32_t folded_site(uint64_t h)
{
	return (uint32_t)h & (FOLDED_SITES - 1);
}

static uint32_t folded_pool(uint64_t h)
{
	return (uint32_t)(h >> 24) & FOLDED_NO_POOL;
}

static uint64_t folded_size(uint64_t h)
{
	return h >> 32;
}

/* Records a folded block of site s; returns its handle or RECORDING_NO_TOKEN (a
 * block of 4 GiB or more, or a site past 2^24, which a handle cannot name: such
 * a block is not recorded). */
static uint64_t new_folded(struct recording *rec, uint32_t s, uint64_t size, uint64_t align)
{
	struct recording_site *site = &rec->sites[s];
	uint32_t pool;

	if (size >> 32 || s >= FOLDED_SITES)
		return RECORDING_NO_TOKEN;
	pool = pool_for(rec, s, size, align);
	if (pool != UINT32_MAX) { /* else the block is counted, in no pool */
		struct recording_pool *p = &site->pools[pool];
		if (++p->live > p->max_live)
			p->max_live = p->live;
		p->allocs++;
	}
	site->count++;
	rec->folded_count++;
	rec->clock++;
	note_granules(rec, site->lane, (int64_t)(plan_granules_of(size) * PLAN_GRANULE_BYTES));
	note_requested(rec, s, (int64_t)size, 1);
	site->total_requested += size;
	return folded_handle(s, pool, size);
}

/* Ends the block of handle h at the current tick: its entry goes to the log, and
 * the in-place realloc now using it, if any, ends too; or it leaves its pool. */
static void end_block(struct recording *rec, uint64_t h)
{
	uint64_t t = rec->clock++;

	if (is_folded(h)) {
		uint32_t s = folded_site(h), pool = folded_pool(h);
		struct recording_site *site = &rec->sites[s];
		if (pool != FOLDED_NO_POOL)
			site->pools[pool].live--;
		note_granules(rec, site->lane,
			      -(int64_t)(plan_granules_of(folded_size(h)) * PLAN_GRANULE_BYTES));
		note_requested(rec, s, -(int64_t)folded_size(h), -1);
		return;
	}
	uint32_t i = (uint32_t)h, range = (uint32_t)(h >> 32) & RANGE_MASK;
	struct recording_live *b = &rec->live[i];
	struct recording_site *site = &rec->sites[b->site];
	struct offset_allocator *offsets = lane_of_handle(rec, h);
	__builtin_prefetch(&offsets->ranges[range]);
	if (b->current != NO_IN_PLACE)
		rec->in_place[b->current].t_end = t;
	site->ended[b->occurrence] = (struct recording_ended){
	    .size = b->size,
	    .offset = offset_allocator_offset(offsets, range), /* within its lane */
	    .t_start = b->t_start,
	    .t_end = t,
	    .occurrence = b->occurrence,
	};
	offset_allocator_give(offsets, range);
	tally(site, b->size, -1);
	note_granules(rec, (uint32_t)(h >> (32 + RANGE_BITS)),
		      -(int64_t)(plan_granules_of(b->size) * PLAN_GRANULE_BYTES));
	note_requested(rec, b->site, -(int64_t)b->requested, -1);
	live_give(rec, i);
}

/* Grows a site's log to capacity entries; what is new reads as zero (a slot
 * with no entry: every ended entry has t_end >= 1). Mapped tables come zeroed,
 * and are not touched here, so that untouched pages stay out of memory. */
static bool log_grow(struct recording_site *site, uint64_t capacity)
{
	uint64_t old_bytes = site->ended_capacity * sizeof(*site->ended);
	uint64_t new_bytes = capacity * sizeof(*site->ended);
	char *grown = grow_table(site->ended, old_bytes, new_bytes);

	if (!grown)
		return false;
	if (new_bytes < MAPPED_TABLE_BYTES) /* else a mapping, zero beyond the old bytes */
		memset(grown + old_bytes, 0, new_bytes - old_bytes);
	site->ended = (struct recording_ended *)grown;
	site->ended_capacity = capacity;
	return true;
}

/* Makes sure a site's log has a slot for the occurrence about to start, count:
 * the log is indexed by occurrence, and in-place reallocs take occurrences of a
 * site without a slot (continue_in_place), so count may be far past the
 * capacity. The log never needs more than the window. */
static bool ended_room(struct recording_site *site)
{
	uint64_t capacity = site->ended_capacity ? 2 * site->ended_capacity : 16;

	if (site->count < site->ended_capacity)
		return true;
	if (capacity > RECORDING_WINDOW_MAX)
		capacity = RECORDING_WINDOW_MAX;
	return log_grow(site, capacity > site->count ? capacity : site->count + 1);
}

/* Records a new exact block with a range of its own; returns its handle or
 * RECORDING_NO_TOKEN. */
static uint64_t new_block(struct recording *rec, uint32_t site, uint64_t size, uint64_t align)
{
	uint64_t granules = plan_granules_of(size), offset;
	uint32_t i, range, lane = rec->sites[site].lane;
	struct recording_lane *l;

	if (!ended_room(&rec->sites[site]) ||
	    (align > 1 && !side_room((void **)&rec->aligned, rec->aligned_count,
				     &rec->aligned_capacity, sizeof(*rec->aligned))))
		return RECORDING_NO_TOKEN;
	i = live_take(rec);
	if (i == NO_LIVE)
		return RECORDING_NO_TOKEN;
	lanes_up_to(rec, lane);
	l = &rec->lanes[lane];
	if (align > l->max_align)
		l->max_align = align;
	range =
	    offset_allocator_take(&l->offsets, granules * PLAN_GRANULE_BYTES,
				  align > PLAN_GRANULE_BYTES ? align : PLAN_GRANULE_BYTES, &offset);
	if (range != OFFSET_ALLOCATOR_NONE && range > RANGE_MASK) {
		offset_allocator_give(&l->offsets, range); /* too many ranges to name */
		range = OFFSET_ALLOCATOR_NONE;
	}
	if (range == OFFSET_ALLOCATOR_NONE) {
		live_give(rec, i);
		return RECORDING_NO_TOKEN;
	}
	uint32_t occurrence = (uint32_t)rec->sites[site].count++;
	if (align > 1)
		rec->aligned[rec->aligned_count++] =
		    (struct recording_aligned){site, occurrence, align};
	rec->live[i] = (struct recording_live){
	    .t_start = rec->clock++,
	    .size = size,
	    .requested = size,
	    .site = site,
	    .occurrence = occurrence,
	    .range = range,
	    .current = NO_IN_PLACE,
	};
	rec->entry_count++;
	tally(&rec->sites[site], size, +1);
	note_granules(rec, lane, (int64_t)(granules * PLAN_GRANULE_BYTES));
	note_requested(rec, site, (int64_t)size, 1);
	rec->sites[site].total_requested += size;
	return handle_of(i, lane, range);
}

int recording_alloc(struct recording *rec, uint64_t address, uint32_t site, uint64_t size,
		    uint64_t align)
{
	uint64_t h;

	if (site >= rec->site_count || !size || !address || !align || (align & (align - 1)) ||
	    align > PLAN_MAX_ALIGN_BYTES || rec->sites[site].count >= UINT32_MAX)
		return -EINVAL;
	addr_map_prefetch(&rec->by_address, address); /* while the range is found */
	struct recording_site *s = &rec->sites[site];
	uint32_t a = (uint32_t)(align > PLAN_GRANULE_BYTES ? align : PLAN_GRANULE_BYTES);
	if (a > s->max_align)
		s->max_align = a;
	h = folds_now(rec, site) ? new_folded(rec, site, size, align)
				 : new_block(rec, site, size, align);
	if (h == RECORDING_NO_TOKEN)
		return -ENOMEM;
	if (addr_map_put(&rec->by_address, address, h) < 0) {
		end_block(rec, h); /* recorded as a block freed at once */
		return -ENOMEM;
	}
	return 0;
}

void recording_free(struct recording *rec, uint64_t address)
{
	uint64_t h;

	if (address && addr_map_remove(&rec->by_address, address, &h))
		end_block(rec, h);
}

uint64_t recording_realloc_begin(struct recording *rec, uint64_t old)
{
	uint64_t h;

	if (old && addr_map_remove(&rec->by_address, old, &h))
		return h;
	return RECORDING_NO_TOKEN;
}

/* Whether a realloc to size bytes stays in the block of handle h when replayed:
 * it fits the block's granules, or its pool's slot. */
static bool fits_in_place(const struct recording *rec, uint64_t h, uint64_t size)
{
	if (is_folded(h))
		return folded_pool(h) != FOLDED_NO_POOL && !(size >> 32) &&
		       size <= rec->sites[folded_site(h)].pools[folded_pool(h)].slot_bytes;
	return plan_granules_of(size) <= plan_granules_of(rec->live[(uint32_t)h].size);
}

/* The realloc stays in the block of handle *h, from site: an entry at the
 * block's offset, taking no space, if the site still records exactly and the
 * block has an entry to continue; else only an occurrence (a site that
 * continues a folded block folds then: an entry could not name the block). A
 * folded block's handle, which holds its size, changes. */
static int continue_in_place(struct recording *rec, uint64_t *h, uint64_t size, uint32_t site)
{
	struct recording_site *rs = &rec->sites[site];

	if (is_folded(*h)) {
		uint32_t s = folded_site(*h);
		uint64_t was = folded_size(*h);
		fold(rec, site, false);
		rs->count++;
		rs->total_requested += size;
		rec->folded_count++;
		rec->clock++;
		note_granules(rec, rec->sites[s].lane,
			      (int64_t)(plan_granules_of(size) - plan_granules_of(was)) *
				  PLAN_GRANULE_BYTES);
		note_requested(rec, s, (int64_t)size - (int64_t)was, 0);
		*h = folded_handle(s, folded_pool(*h), size);
		return 0;
	}
	struct recording_live *b = &rec->live[(uint32_t)*h];
	if (folds_now(rec, site)) {
		if (b->current != NO_IN_PLACE)
			rec->in_place[b->current].t_end = rec->clock;
		b->current = NO_IN_PLACE;
		rs->count++;
		rec->folded_count++;
		rec->clock++;
	} else {
		if (rec->in_place_count >= NO_IN_PLACE ||
		    !side_room((void **)&rec->in_place, rec->in_place_count,
			       &rec->in_place_capacity, sizeof(*rec->in_place)))
			return -ENOMEM;
		rec->in_place[rec->in_place_count] = (struct recording_in_place){
		    .size = size,
		    .t_start = rec->clock++,
		    .t_end = PLAN_T_INFINITY,
		    .root_offset = offset_allocator_offset(
			&rec->lanes[rec->sites[b->site].lane].offsets, b->range),
		    .site = site,
		    .occurrence = (uint32_t)rs->count++,
		    .root_site = b->site,
		    .root_occurrence = b->occurrence,
		};
		rec->entry_count++;
		/* The entry it replaces ends now, unless it is the block's own entry,
		 * whose lifetime is the block's and goes on. */
		if (b->current != NO_IN_PLACE)
			rec->in_place[b->current].t_end = rec->clock;
		rec->clock++;
		b->current = (uint32_t)rec->in_place_count++;
	}
	/* Its bytes stay the block's site's: the block did not move. */
	note_requested(rec, b->site, (int64_t)size - (int64_t)b->requested, 0);
	rs->total_requested += size;
	b->requested = size;
	return 0;
}

void recording_realloc_done(struct recording *rec, uint64_t token, uint64_t old, uint64_t address,
			    uint64_t size, uint32_t site)
{
	if (!address) {
		if (token != RECORDING_NO_TOKEN && addr_map_put(&rec->by_address, old, token) < 0)
			end_block(rec, token);
		return;
	}
	if (token == RECORDING_NO_TOKEN) {
		if (site != RECORDING_NO_SITE)
			recording_alloc(rec, address, site, size, 1);
		return;
	}
	if (site < rec->site_count && size && rec->sites[site].count < UINT32_MAX &&
	    fits_in_place(rec, token, size) && continue_in_place(rec, &token, size, site) == 0) {
		if (addr_map_put(&rec->by_address, address, token) < 0)
			end_block(rec, token);
		return;
	}
	/* It moves: the new block starts, then the old one ends. */
	if (site != RECORDING_NO_SITE)
		recording_alloc(rec, address, site, size, 1);
	end_block(rec, token);
}

/* The occurrences of a site that have an entry. */
static uint64_t exact_of(const struct recording_site *site)
{
	return site->folded ? site->exact : site->count;
}

/* Lays the lanes out one after the other, each at a multiple of its largest
 * alignment; returns the arena they need. */
static uint64_t lane_bases(const struct recording *rec, uint64_t base[RECORDING_LANES])
{
	uint64_t end = 0;

	for (uint32_t l = 0; l < rec->lane_count; l++) {
		const struct recording_lane *lane = &rec->lanes[l];
		base[l] = (end + lane->max_align - 1) / lane->max_align * lane->max_align;
		end = base[l] + offset_allocator_high_water(&lane->offsets);
	}
	return end;
}

/* What placing an entry needs: where each lane starts, and the sites' first
 * entries (for in_place_of). */
struct build {
	struct recording *rec;
	const struct plan_site *sites; /* with first_entry set */
	uint64_t base[RECORDING_LANES];
};

/* A slot of a log whose entry did not end (recording_build marks them): its
 * occurrence field says which list holds the entry, its size field where. */
#define LOG_LIVE     (UINT32_MAX - 1)
#define LOG_IN_PLACE (UINT32_MAX - 2)

/* Marks each site's log slots of entries that did not end with where they are (a
 * live slot, an in-place realloc), grows a log to all the site's entries if need
 * be (in-place reallocs take no slot while recording), and notes each aligned
 * entry's alignment in its slot. Then a site's log holds, or points to, every
 * entry of the site, at the index of its occurrence. */
static int mark_logs(struct recording *rec)
{
	for (uint32_t s = 0; s < rec->site_count; s++) {
		struct recording_site *site = &rec->sites[s];
		if (exact_of(site) > site->ended_capacity && !log_grow(site, exact_of(site)))
			return -ENOMEM;
	}
	for (uint32_t i = 0; i < rec->live_used; i++) {
		const struct recording_live *x = &rec->live[i];
		if (x->site != RECORDING_NO_SITE)
			rec->sites[x->site].ended[x->occurrence] =
			    (struct recording_ended){.size = i, .occurrence = LOG_LIVE};
	}
	for (uint64_t i = 0; i < rec->in_place_count; i++) {
		const struct recording_in_place *x = &rec->in_place[i];
		rec->sites[x->site].ended[x->occurrence] =
		    (struct recording_ended){.size = i, .occurrence = LOG_IN_PLACE};
	}
	for (uint64_t i = 0; i < rec->aligned_count; i++) {
		const struct recording_aligned *x = &rec->aligned[i];
		rec->sites[x->site].ended[x->occurrence].align_log2 =
		    (uint32_t)__builtin_ctzll(x->align);
	}
	return 0;
}

/* Occurrence k of site s, from its log (mark_logs), into *e. Returns false if
 * nothing recorded it (which cannot happen). */
static bool entry_at(const struct build *b, uint32_t s, uint64_t k, struct plan_entry *e)
{
	const struct recording *rec = b->rec;
	const struct recording_ended *x = &rec->sites[s].ended[k];
	uint64_t base = b->base[rec->sites[s].lane];

	*e = (struct plan_entry){
	    .site = s,
	    .occurrence = (uint32_t)k,
	    .align_bytes = UINT32_C(1) << x->align_log2,
	};
	if (x->occurrence == LOG_LIVE) {
		const struct recording_live *l = &rec->live[x->size];
		e->size_bytes = l->size;
		e->offset_bytes = base + offset_allocator_offset(
					     &rec->lanes[rec->sites[s].lane].offsets, l->range);
		e->t_start = l->t_start;
		e->t_end = PLAN_T_INFINITY;
	} else if (x->occurrence == LOG_IN_PLACE) {
		const struct recording_in_place *p = &rec->in_place[x->size];
		e->size_bytes = p->size;
		e->offset_bytes = b->base[rec->sites[p->root_site].lane] + p->root_offset;
		e->t_start = p->t_start;
		e->t_end = p->t_end;
		e->in_place_of = b->sites[p->root_site].first_entry + p->root_occurrence + 1;
	} else if (x->occurrence == k && x->t_end) {
		e->size_bytes = x->size;
		e->offset_bytes = base + x->offset;
		e->t_start = x->t_start;
		e->t_end = x->t_end;
	} else {
		return false;
	}
	return true;
}

/* Encodes every site's entries, a block of them at a time, into built->blocks and
 * built->encoded; sets the image's encoded entries and size classes. Each site's
 * log is given back once encoded, so the logs shrink as the plan grows. */
static int encode_sites(const struct build *b, struct plan_image *image,
			struct recording_built *built)
{
	struct recording *rec = b->rec;
	uint64_t block_count = 0, block = 0, at = 0;
	/* On the heap: the plan may be written from a signal handler on a small
	 * alternate stack. */
	struct plan_entry *scratch = malloc(PLAN_BLOCK_ENTRIES * sizeof(*scratch));
	int r = 0;

	for (uint32_t s = 0; s < rec->site_count; s++)
		block_count += plan_site_blocks(exact_of(&rec->sites[s]));
	built->blocks = malloc((block_count + 1) * sizeof(*built->blocks));
	/* Room for the worst case; only what is written gets touched. */
	built->encoded = malloc(rec->entry_count * ENTRY_CODEC_MAX_BYTES + 1);
	if (!scratch || !built->blocks || !built->encoded) {
		r = -ENOMEM;
		goto out;
	}
	memset(image->record.size_classes, 0, sizeof(image->record.size_classes));
	for (uint32_t s = 0; s < rec->site_count; s++) {
		struct recording_site *site = &rec->sites[s];
		const uint64_t exact = exact_of(site);
		for (uint64_t first = 0; first < exact; first += PLAN_BLOCK_ENTRIES) {
			uint64_t n = exact - first < PLAN_BLOCK_ENTRIES ? exact - first
									: PLAN_BLOCK_ENTRIES;
			for (uint64_t k = 0; k < n; k++) {
				if (!entry_at(b, s, first + k, &scratch[k])) {
					r = -EINVAL;
					goto out;
				}
				unsigned c = plan_size_class(scratch[k].size_bytes);
				image->record.size_classes[c / 64] |= UINT64_C(1) << (c % 64);
			}
			built->blocks[block++] = at;
			int64_t bytes =
			    entry_codec_encode(scratch, (uint32_t)n, built->encoded + at);
			if (bytes < 0) {
				r = (int)bytes;
				goto out;
			}
			at += (uint64_t)bytes;
		}
		free_table(site->ended, site->ended_capacity * sizeof(*site->ended));
		site->ended = NULL;
		site->ended_capacity = 0;
	}
	built->blocks[block] = at;
	plan_size_classes_add_pools(image->record.size_classes, built->pools,
				    image->record.pool_count);
	image->entries = NULL;
	image->blocks = built->blocks;
	image->encoded_entries = built->encoded;
	image->record.entries_bytes = at;
out:
	free(scratch);
	return r;
}

/* Re-plans the image's entries (decoded for it) and pools with the planner
 * proper when opt is given, else with the event packer, and keeps the new plan
 * if its arena is smaller. */
static int replan_if_smaller(struct plan_image *image, const struct planner_options *opt,
			     struct recording_built *built)
{
	struct plan_image trial = *image;
	struct plan_entry *decoded, *replanned;
	struct plan_chunk *chunks;
	int r;

	r = plan_image_entries(image, &decoded);
	if (r < 0)
		return r;
	trial.entries = decoded;
	r = plan_builder_replan(&trial, opt, &replanned, &chunks);
	free(decoded);
	if (r < 0)
		return r;
	if (trial.record.arena_bytes < image->record.arena_bytes) {
		free(built->entries);
		free(built->chunks);
		built->entries = replanned;
		built->chunks = chunks;
		image->entries = replanned;
		image->chunks = chunks;
		image->record.arena_bytes = trial.record.arena_bytes;
	} else {
		free(replanned);
		free(chunks);
	}
	return 0;
}

/* The bytes of an image's pools. */
static uint64_t pool_bytes(const struct plan_image *image)
{
	uint64_t bytes = 0;

	for (uint32_t k = 0; k < image->record.pool_count; k++)
		bytes += image->pools[k].slot_bytes * image->pools[k].slot_count;
	return bytes;
}

/* Lanes that make the arena bigger than this share of what the threads need side
 * by side are worth packing all together instead (see recording.h). */
#define LANES_SLACK 1.25

/* What the lanes' threads need when they run side by side: the largest sum of
 * lane peaks over lanes alive at once, at least the most bytes live at once.
 * Lanes none of whose threads was noted (recording_thread_begins) only count
 * through the latter. The largest overlap of intervals is at one's start. */
static uint64_t side_by_side_bytes(const struct recording *rec)
{
	uint64_t most = rec->peak_bytes;

	for (uint32_t i = 0; i < rec->lane_count; i++) {
		uint64_t from = rec->lanes[i].alive_from, sum = 0;
		if (from == NOT_NOTED)
			continue;
		for (uint32_t j = 0; j < rec->lane_count; j++) {
			const struct recording_lane *b = &rec->lanes[j];
			uint64_t to = b->threads ? UINT64_MAX : b->alive_to;
			if (b->alive_from <= from && from <= to)
				sum += b->peak_bytes;
		}
		if (sum > most)
			most = sum;
	}
	return most;
}

/* How many of a site's last entries replay may reuse past its entries: for a
 * site never folded that repeats (it reuses its memory), four times its most
 * blocks alive at once and 32 more, of its last turns (RECORDING_TAIL_MAX at
 * most); else none. The planner gave other sites' blocks the same bytes at
 * other moments of a turn, which a longer run's turns need not repeat: the
 * more of its last places a site may choose from, the fewer it finds busy
 * (sqlite3 on a 20 times longer script: 91.6% of allocations served with
 * twice and two, 97.6% with this, and no more with more). */
static uint32_t tail_of(const struct recording_site *site)
{
	uint64_t tail = 4 * (uint64_t)site->max_live + 32;

	if (site->folded || site->count < RECORDING_STEADY_MIN ||
	    site->count < RECORDING_STEADY_REUSE * (uint64_t)site->max_live)
		return 0;
	if (tail > RECORDING_TAIL_MAX)
		tail = RECORDING_TAIL_MAX;
	return (uint32_t)(tail < site->count ? tail : site->count);
}

/* Sets each site's counts, bytes at the requested peak and pool range, and
 * makes the pools and chunks tables: each site's pools in their order, each
 * pool's chunks in the order they were reserved, their offsets made absolute
 * with the lanes' bases. A pool with no slot (made, never used) is left out. */
static int list_pools(struct build *b, struct plan_site *sites, struct recording_built *built,
		      struct plan_image_record *record)
{
	struct recording *rec = b->rec;
	uint32_t n = 0, m = 0;

	for (uint32_t s = 0; s < rec->site_count; s++) {
		n += rec->sites[s].pool_count;
		m += rec->sites[s].chunk_count;
	}
	built->pools = malloc((n ? n : 1) * sizeof(*built->pools));
	built->chunks = malloc((m ? m : 1) * sizeof(*built->chunks));
	if (!built->pools || !built->chunks)
		return -ENOMEM;
	n = m = 0;
	for (uint32_t s = 0; s < rec->site_count; s++) {
		const struct recording_site *site = &rec->sites[s];
		const struct offset_allocator *offsets = &rec->lanes[site->lane].offsets;
		bool at_peak = site->peak_gen == rec->peak_gen;
		sites[s].alloc_count = site->count;
		sites[s].total_bytes = site->total_requested;
		sites[s].peak_bytes = at_peak ? site->peak_requested : site->live_requested;
		sites[s].peak_blocks = at_peak ? site->peak_blocks : site->live_blocks;
		sites[s].first_pool = n;
		for (uint32_t k = 0; k < site->pool_count; k++) {
			uint32_t i = site->order[k];
			const struct recording_pool *p = &site->pools[i];
			if (!p->capacity)
				continue;
			built->pools[n] = (struct plan_pool){
			    .site = s,
			    .align_bytes = p->align,
			    .slot_bytes = p->slot_bytes,
			    .first_chunk = m,
			    .slot_count = p->capacity,
			    .max_live = p->max_live,
			    .allocs = p->allocs,
			};
			for (uint32_t c = 0; c < site->chunk_count; c++) {
				const struct recording_chunk *chunk = &site->chunks[c];
				if (chunk->pool != i)
					continue;
				built->chunks[m++] = (struct plan_chunk){
				    .offset_bytes = b->base[site->lane] +
						    offset_allocator_offset(offsets, chunk->range),
				    .t_start = chunk->t_start,
				    .pool = n,
				    .slot_count = chunk->slots,
				    .occurrence = chunk->occurrence,
				};
				built->pools[n].chunk_count++;
			}
			n++;
		}
		sites[s].pool_count = n - sites[s].first_pool;
	}
	record->pool_count = n;
	record->chunk_count = m;
	return 0;
}

int recording_build(struct recording *rec, struct plan_image *image,
		    const struct planner_options *opt, struct recording_built *built)
{
	struct build b = {.rec = rec};
	uint64_t n = rec->entry_count, first = 0;
	uint32_t sc = rec->site_count;
	int r;

	memset(built, 0, sizeof(*built));
	if (image->record.site_count != sc)
		return -EINVAL;
	uint64_t arena = lane_bases(rec, b.base);
	built->sites = malloc((sc ? sc : 1) * sizeof(*built->sites));
	if (!built->sites)
		return -ENOMEM;
	for (uint32_t s = 0; s < sc; s++) {
		built->sites[s] = image->sites[s];
		built->sites[s].first_entry = first;
		built->sites[s].entry_count = exact_of(&rec->sites[s]);
		built->sites[s].tail_entries = tail_of(&rec->sites[s]);
		first += built->sites[s].entry_count;
	}
	b.sites = built->sites;
	r = list_pools(&b, built->sites, built, &image->record);
	/* Every entry is in exactly one of: its site's log, a live slot, the in-place
	 * list. */
	if (r == 0)
		r = mark_logs(rec);
	image->sites = built->sites;
	image->pools = built->pools;
	image->chunks = built->chunks;
	image->record.entry_count = n;
	image->record.folded_count = rec->folded_count;
	image->record.arena_bytes = arena;
	image->record.lower_bound_bytes = rec->peak_bytes;
	image->record.requested_peak_bytes = rec->peak_requested;
	image->record.requested_peak_time = rec->peak_time;
	if (r == 0)
		r = encode_sites(&b, image, built);
	/* The planner proper packs all lanes together: only for one lane. And only
	 * where it can save what is worth its budget, which a program that runs many
	 * short processes (a shell script) pays at every exit. */
	uint64_t gap = arena > rec->peak_bytes ? arena - rec->peak_bytes : 0;
	if (r == 0 && rec->lane_count <= 1 && opt && gap >= PLANNER_MIN_GAIN_BYTES &&
	    gap >= arena / 100 && (double)n <= opt->time_limit_s * PLANNER_BLOCKS_PER_SECOND)
		r = replan_if_smaller(image, opt, built);
	/* Pools hold their slots from when they are made on, whoever packs them:
	 * they are needed side by side too. */
	if (r == 0 && rec->lane_count > 1 &&
	    (double)arena >
		LANES_SLACK * (double)(side_by_side_bytes(rec) + pool_bytes(image)))
		r = replan_if_smaller(image, NULL, built); /* all together, without the flag */
	if (r == 0 && rec->lane_count > 1 && !built->entries)
		image->record.flags |= PLAN_IMAGE_THREAD_REGIONS; /* the lanes stand */
	if (r < 0)
		recording_built_free(built);
	return r;
}

void recording_built_free(struct recording_built *built)
{
	free(built->sites);
	free(built->pools);
	free(built->chunks);
	free(built->entries);
	free(built->blocks);
	free(built->encoded);
	memset(built, 0, sizeof(*built));
}
