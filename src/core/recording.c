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

/* Read at random, two to a cache line (cache_aligned.h). */
_Static_assert(sizeof(struct recording_live) == 32, "a live slot is half a cache line");

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
	rec->lanes = calloc(RECORDING_LANES, sizeof(*rec->lanes));
	if (!rec->lanes)
		return -ENOMEM;
	return addr_map_init(&rec->by_address, 4096);
}

void recording_fini(struct recording *rec)
{
	for (uint32_t s = 0; s < rec->site_count; s++)
		free_table(rec->sites[s].ended,
			   rec->sites[s].ended_capacity * sizeof(*rec->sites[s].ended));
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

/* What the address map holds for a block: its live slot, lane and range, so that
 * all can be loaded at once when it ends. Never RECORDING_NO_TOKEN: live slots
 * stay below 2^31. */
static uint64_t handle_of(uint32_t i, uint32_t lane, uint32_t range)
{
	return (uint64_t)(lane << RANGE_BITS | range) << 32 | i;
}

static struct offset_allocator *lane_of_handle(struct recording *rec, uint64_t h)
{
	return &rec->lanes[h >> (32 + RANGE_BITS)].offsets;
}

/* Ends the block of handle h at the current tick: its entry goes to the log, and
 * the in-place realloc now using it, if any, ends too. */
static void end_block(struct recording *rec, uint64_t h)
{
	uint32_t i = (uint32_t)h, range = (uint32_t)(h >> 32) & RANGE_MASK;
	struct offset_allocator *offsets = lane_of_handle(rec, h);
	struct recording_live *b = &rec->live[i];
	uint64_t t = rec->clock++;

	__builtin_prefetch(&offsets->ranges[range]);

	if (b->current != NO_IN_PLACE)
		rec->in_place[b->current].t_end = t;
	struct recording_site *site = &rec->sites[b->site];
	site->ended[b->occurrence] = (struct recording_ended){
	    .size = b->size,
	    .offset = offset_allocator_offset(offsets, range), /* within its lane */
	    .t_start = b->t_start,
	    .t_end = t,
	    .occurrence = b->occurrence,
	};
	offset_allocator_give(offsets, range);
	rec->live_bytes -= granules_of(b->size) * PLAN_GRANULE_BYTES;
	rec->lanes[h >> (32 + RANGE_BITS)].live_bytes -= granules_of(b->size) * PLAN_GRANULE_BYTES;
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
 * capacity. */
static bool ended_room(struct recording_site *site)
{
	uint64_t capacity = site->ended_capacity ? 2 * site->ended_capacity : 16;

	if (site->count < site->ended_capacity)
		return true;
	return log_grow(site, capacity > site->count ? capacity : site->count + 1);
}

/* Records a new block with a range of its own; returns its handle or
 * RECORDING_NO_TOKEN. */
static uint64_t new_block(struct recording *rec, uint32_t site, uint64_t size, uint64_t align)
{
	uint64_t granules = granules_of(size), offset;
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
	    .site = site,
	    .occurrence = occurrence,
	    .range = range,
	    .current = NO_IN_PLACE,
	};
	rec->entry_count++;
	rec->live_bytes += granules * PLAN_GRANULE_BYTES;
	if (rec->live_bytes > rec->peak_bytes)
		rec->peak_bytes = rec->live_bytes;
	l->live_bytes += granules * PLAN_GRANULE_BYTES;
	if (l->live_bytes > l->peak_bytes)
		l->peak_bytes = l->live_bytes;
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
	h = new_block(rec, site, size, align);
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

/* The realloc stays in its block: a new entry at the same offset, taking no space. */
static int continue_in_place(struct recording *rec, uint32_t i, uint64_t size, uint32_t site)
{
	struct recording_live *b = &rec->live[i];

	if (rec->in_place_count >= NO_IN_PLACE ||
	    !side_room((void **)&rec->in_place, rec->in_place_count, &rec->in_place_capacity,
		       sizeof(*rec->in_place)))
		return -ENOMEM;
	rec->in_place[rec->in_place_count] = (struct recording_in_place){
	    .size = size,
	    .t_start = rec->clock++,
	    .t_end = PLAN_T_INFINITY,
	    .root_offset =
		offset_allocator_offset(&rec->lanes[rec->sites[b->site].lane].offsets, b->range),
	    .site = site,
	    .occurrence = (uint32_t)rec->sites[site].count++,
	    .root_site = b->site,
	    .root_occurrence = b->occurrence,
	};
	rec->entry_count++;
	/* The entry it replaces ends now, unless it is the block's own entry, whose
	 * lifetime is the block's and goes on. */
	if (b->current != NO_IN_PLACE)
		rec->in_place[b->current].t_end = rec->clock;
	rec->clock++;
	b->current = (uint32_t)rec->in_place_count++;
	return 0;
}

void recording_realloc_done(struct recording *rec, uint64_t token, uint64_t old, uint64_t address,
			    uint64_t size, uint32_t site)
{
	uint32_t i = (uint32_t)token;

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
	    granules_of(size) <= granules_of(rec->live[i].size) &&
	    continue_in_place(rec, i, size, site) == 0) {
		if (addr_map_put(&rec->by_address, address, token) < 0)
			end_block(rec, token);
		return;
	}
	/* It moves: the new block starts, then the old one ends. */
	if (site != RECORDING_NO_SITE)
		recording_alloc(rec, address, site, size, 1);
	end_block(rec, token);
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
		if (site->count > site->ended_capacity && !log_grow(site, site->count))
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
		block_count += plan_site_blocks(rec->sites[s].count);
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
		for (uint64_t first = 0; first < site->count; first += PLAN_BLOCK_ENTRIES) {
			uint64_t n = site->count - first < PLAN_BLOCK_ENTRIES ? site->count - first
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
	image->entries = NULL;
	image->blocks = built->blocks;
	image->encoded_entries = built->encoded;
	image->record.entries_bytes = at;
out:
	free(scratch);
	return r;
}

/* Re-plans the image's entries (decoded for it) with the planner proper when opt
 * is given, else with the event packer, and keeps the new plan if its arena is
 * smaller. */
static int replan_if_smaller(struct plan_image *image, const struct planner_options *opt,
			     struct recording_built *built)
{
	struct plan_image trial = *image;
	struct plan_entry *decoded, *replanned;
	int r;

	r = plan_image_entries(image, &decoded);
	if (r < 0)
		return r;
	trial.entries = decoded;
	r = plan_builder_replan(&trial, opt, &replanned);
	free(decoded);
	if (r < 0)
		return r;
	if (trial.record.arena_bytes < image->record.arena_bytes) {
		built->entries = replanned;
		image->entries = replanned;
		image->record.arena_bytes = trial.record.arena_bytes;
	} else {
		free(replanned);
	}
	return 0;
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

int recording_build(struct recording *rec, struct plan_image *image,
		    const struct planner_options *opt, struct recording_built *built)
{
	struct build b = {.rec = rec};
	uint64_t n = rec->entry_count, first = 0, arena = lane_bases(rec, b.base);
	uint32_t sc = rec->site_count;
	int r;

	memset(built, 0, sizeof(*built));
	if (image->record.site_count != sc)
		return -EINVAL;
	built->sites = malloc((sc ? sc : 1) * sizeof(*built->sites));
	if (!built->sites)
		return -ENOMEM;
	for (uint32_t s = 0; s < sc; s++) {
		built->sites[s] = image->sites[s];
		built->sites[s].first_entry = first;
		built->sites[s].entry_count = rec->sites[s].count;
		first += rec->sites[s].count;
	}
	b.sites = built->sites;
	/* Every entry is in exactly one of: its site's log, a live slot, the in-place
	 * list. */
	r = mark_logs(rec);
	image->sites = built->sites;
	image->record.entry_count = n;
	image->record.arena_bytes = arena;
	image->record.lower_bound_bytes = rec->peak_bytes;
	if (r == 0)
		r = encode_sites(&b, image, built);
	/* The planner proper packs all lanes together: only for one lane. And only
	 * where it can save what is worth its budget, which a program that runs many
	 * short processes (a shell script) pays at every exit. */
	uint64_t gap = arena > rec->peak_bytes ? arena - rec->peak_bytes : 0;
	if (r == 0 && rec->lane_count <= 1 && opt && gap >= PLANNER_MIN_GAIN_BYTES &&
	    gap >= arena / 100 && (double)n <= opt->time_limit_s * PLANNER_BLOCKS_PER_SECOND)
		r = replan_if_smaller(image, opt, built);
	if (r == 0 && rec->lane_count > 1 &&
	    (double)arena > LANES_SLACK * (double)side_by_side_bytes(rec))
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
	free(built->entries);
	free(built->blocks);
	free(built->encoded);
	memset(built, 0, sizeof(*built));
}
