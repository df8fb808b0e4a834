/* A recording in progress, planned as it goes and folded as it goes: what a plan
 * says of a program is bounded by what the program does, not by how long it ran.
 *
 * Each call site's first occurrences (RECORDING_WINDOW and more: see there) are
 * recorded exactly, and each such block gets its offset from an online offset
 * allocator
 * (offset_allocator.h) the moment it happens, so when the program ends those
 * entries are planned already. Then the site is folded: what repeats is its
 * steady state, and from then on only its blocks alive at once are counted, per
 * size band. Folding makes the site's pools (struct plan_pool), one per band or
 * group of bands, with slots as big as the band's biggest block; a folded block
 * takes a free slot of the tightest pool that fits it. Slots are reserved in
 * chunks, in the same allocator, when the blocks need them: a quarter of the
 * most blocks of those sizes the site had alive at once (in its window) at a
 * time, so that the chunks may take the bytes of the site's exact blocks as
 * those die.
 * So the pools a plan holds are what the recorded run needed, reserved when it
 * needed them, whatever order its blocks came and went in: replay serves any
 * number of further occurrences from them.
 * A site that repeats but was never folded (fewer occurrences than the window,
 * but reuse: at least RECORDING_STEADY_REUSE times as many blocks as it ever had
 * alive at once) has a tail instead: the places of its last entries, of its
 * loop's last turns, which replay reuses once its entries run out in a longer
 * run. While the loop ran, nothing else lived in those bytes; blocks freed only
 * after it (at exit) did not; pools reserved at the end would overlap those.
 *
 * Each exact entry is written once, when its block ends: what it will say is
 * kept in the block's live slot meanwhile (slots are reused last-freed first, so
 * they stay in cache), and at the end it goes to its site's log of ended
 * entries, at the index of its occurrence. So the log is in occurrence order as
 * it is, and recording_build encodes it from there. The rare parts of an entry
 * stay out of the hot path: the alignment of the few blocks aligned beyond a
 * granule, and the in-place reallocs, are kept in side lists.
 *
 * Time is a logical clock: one tick per allocation or free. A realloc that moves
 * takes two: the new block starts, then the old one ends, since both are alive
 * during the copy. A realloc that fits its block (its granules, or its pool
 * slot) stays there: its entry takes no space of its own, names the entry whose
 * block it continues (in_place_of), and that entry's lifetime stretches over it.
 * A realloc that stays in a folded block has no entry: its site is folded then.
 *
 * Each thread gets a region of the arena of its own (a lane: the caller names
 * it). Threads interleave differently in every run, so in one packing shared by
 * all, a block planned to reuse the bytes of another thread's block would often
 * find them still in use when replayed; within a lane, only the thread's own
 * order matters, and that is the same run after run. Lanes cost little arena when
 * threads run side by side, and much when they follow each other; if they would
 * make the arena more than a quarter bigger than what the threads need when they
 * run side by side, the build packs all blocks together instead, if that is
 * smaller. What they need side by side is the most bytes live at once, or, if
 * more, the largest sum of lane peaks over lanes whose threads were alive at the
 * same time (created and not yet ended): threads that were alive together may
 * well run together when replayed, however the recording's scheduler happened
 * to run them (one after another, on a busy machine). A plan whose lanes stand
 * is marked PLAN_IMAGE_THREAD_REGIONS, so that re-planning keeps them.
 *
 * For reports, each site's requested bytes live at the image's requested peak
 * are kept exactly as the run goes, in constant time per event: a site notes
 * its bytes as they were at the last peak the first time it changes after it.
 *
 * Addresses are only keys: the recording never touches the memory. Pure: no
 * global state; not thread-safe (the caller orders events under its own lock). */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "addr_map.h"
#include "offset_allocator.h"
#include "plan_file.h"
#include "planner.h"

/* A site is folded once it has had RECORDING_WINDOW occurrences if by then it is
 * in a steady state: the most blocks it had alive at once grew by at most a
 * quarter over its last half (checked at each doubling of its count), and it
 * has had at least RECORDING_STEADY_REUSE times as many blocks. A site whose
 * blocks pile up (a table being filled) is recorded exactly on, since exact
 * entries pack it best, up to RECORDING_WINDOW_MAX occurrences. At about 10
 * bytes an entry, a steady loop's site takes some 40 KiB of plan, and any site
 * at most 160 KiB, however long the run. A larger bound packs such a site a
 * little tighter but makes the plan and the planner's work grow with the run:
 * at 131,072, bench-churn's plan was 1.4 MiB for 1M operations and 2.7 MiB
 * for 20M, and `memplan record` of the 20M run took twice as long. */
#define RECORDING_WINDOW     4096u
#define RECORDING_WINDOW_MAX 16384u
/* Exact entries of the whole image, at most: past that, every site is folded at
 * its next allocation (a program with very many busy sites). */
#define RECORDING_EXACT_MAX (UINT64_C(1) << 22)
/* A site never folded gets a tail (plan_site.tail_entries) if it had at least
 * this many blocks, and this many times as many as it ever had alive at once:
 * it reuses its memory. Four, not eight: CPython's reads of a longer stdin
 * came from a site of 6 blocks on the short one, and went to libc past them
 * (92.8% of calls served; 98.1% with a tail). */
#define RECORDING_STEADY_MIN   4u
#define RECORDING_STEADY_REUSE 2u
/* A tail's entries, at most. */
#define RECORDING_TAIL_MAX 1024u
/* Pools (slot sizes) of one site, and chunks of slots, at most. */
#define RECORDING_POOLS_MAX  28u
#define RECORDING_CHUNKS_MAX 4096u

/* An entry whose block has ended, in its site's log (no alignment: see aligned). */
struct recording_ended {
	uint64_t size, offset, t_start, t_end;
	uint32_t occurrence;
	uint32_t align_log2; /* 0 until recording_build notes it (see aligned) */
};

/* Size bands: a granule (16 bytes) wide up to 256 bytes, eight to a power of
 * two up to 4096 (257-288, 289-320, ..., 481-512, 513-576, ...), then four
 * (4097-5120, ...), as pool slots above 4096 are sized by plan_size_class
 * anyway (band_of). Eight rather than four: bench-churn's pools for blocks of
 * 16 to 512 bytes, and so its arena, 1.1% smaller. */
#define RECORDING_BANDS 128u

/* A site's blocks by band, while it is not folded: suffix_live is how many of
 * its blocks live now are of this band or a bigger one, suffix_max the most
 * that ever were; what pools a site needs follows from these (pools_from_tallies). */
struct recording_band {
	uint32_t suffix_live, suffix_max;
	uint64_t max_size; /* of its blocks in this band */
};

/* A pool of a site: slots of slot_bytes, capacity of them, in chunks, each a
 * range of its lane's offset allocator taken when the slots were needed and
 * kept to the end. target: how many slots it was made for (0 if it was made for
 * one block), which sets the size of its chunks. */
struct recording_pool {
	uint64_t slot_bytes, allocs;
	uint32_t align, target;
	uint32_t capacity, live, max_live;
};

struct recording_chunk {
	uint64_t t_start;
	uint32_t pool, slots, range;
	uint32_t occurrence; /* the site's count when it was reserved */
};

struct recording_site {
	uint64_t count; /* allocations so far: the next one's occurrence */
	uint64_t exact; /* occurrences with an entry: count until folded */
	uint32_t lane;	/* the lane its blocks are packed in */
	bool folded;
	/* When folding is next considered (a count), and its most blocks alive at
	 * once as they were the last time. */
	uint64_t next_check;
	uint32_t live_mark;
	uint32_t max_align; /* of its blocks */
	/* Its ended entries, each at the index of its occurrence (a slot of zeros for
	 * one that has not ended); a slot for every block it started, so ending never
	 * fails. */
	struct recording_ended *ended;
	uint64_t ended_capacity;
	/* Its blocks by band, bands[0..band_count), while it is not folded. */
	struct recording_band *bands;
	uint32_t band_count;
	uint32_t live_blocks, max_live;
	/* Its pools, in the order they were made; order lists them by slot size.
	 * Their chunks, in the order they were reserved. */
	struct recording_pool *pools; /* RECORDING_POOLS_MAX of them, once it has one */
	uint32_t pool_count;
	uint8_t order[RECORDING_POOLS_MAX];
	struct recording_chunk *chunks;
	uint32_t chunk_count, chunk_capacity;
	/* Requested bytes and blocks live now, and as they were at the image's
	 * requested peak number peak_gen (see recording_build); all requested. */
	uint64_t live_requested, peak_requested, total_requested;
	uint32_t peak_blocks;
	uint64_t peak_gen;
};

/* Lanes beyond this share: lane l is packed with lane l % RECORDING_LANES. */
#define RECORDING_LANES 64u

struct recording_lane {
	struct offset_allocator offsets;
	uint64_t max_align; /* its base in the arena is a multiple of this */
	uint64_t live_bytes, peak_bytes;
	/* When its threads were alive: from the first's creation to the last's end
	 * (recording_thread_begins, _ends); threads counts those not ended. */
	uint64_t alive_from, alive_to;
	uint32_t threads;
};

/* An exact block alive now, found by its address: its own entry, until it ends
 * (a folded block has no live slot: its handle in the address map says all).
 * requested is its size now, after reallocations in place; size what it was
 * allocated with. */
struct recording_live {
	uint64_t t_start, size, requested;
	uint32_t site, occurrence; /* site: RECORDING_NO_SITE when the slot is unused */
	uint32_t range;	  /* in the offset allocator; next free slot when unused */
	uint32_t current; /* the in-place realloc now using it, or NO_IN_PLACE */
};

/* An in-place realloc's entry; its offset is its root's. */
struct recording_in_place {
	uint64_t size, t_start, t_end;
	uint64_t root_offset; /* within the root's lane */
	uint32_t site, occurrence;
	uint32_t root_site, root_occurrence; /* the entry whose block it continues */
};

/* An entry aligned beyond a granule. */
struct recording_aligned {
	uint32_t site, occurrence;
	uint64_t align;
};

/* The fields are private; the struct is public so that it can be embedded. */
struct recording {
	struct recording_site *sites;
	uint32_t site_count, site_capacity;
	struct recording_live *live;
	uint32_t live_used, live_capacity, live_free; /* live_free: a list through range */
	struct addr_map by_address;		      /* address -> live slot and range */
	struct recording_lane *lanes;
	uint32_t lane_count;
	struct recording_in_place *in_place;
	uint64_t in_place_count, in_place_capacity;
	struct recording_aligned *aligned;
	uint64_t aligned_count, aligned_capacity;
	uint64_t clock, entry_count, folded_count, live_bytes, peak_bytes;
	uint64_t live_requested, peak_requested, peak_gen, peak_time;
};

/* Returns 0 or -ENOMEM. */
int recording_init(struct recording *rec);
void recording_fini(struct recording *rec);

/* Adds a call site; sites are numbered from 0 in the order they are added.
 * Returns 0 or -ENOMEM. */
int recording_add_site(struct recording *rec);

/* Puts site in lane (any number; see RECORDING_LANES) if it has no entry yet: a
 * site's blocks all go to the lane of its first. Returns 0 or -ENOMEM. */
int recording_site_lane(struct recording *rec, uint32_t site, uint32_t lane);

/* A thread of lane (any number, as for recording_site_lane) has been alive since
 * tick since (at most the current tick: when its creator created it). Once per
 * thread, before its first block. */
void recording_thread_begins(struct recording *rec, uint32_t lane, uint64_t since);

/* A thread of lane that began has ended, now. A thread that never ends this way
 * (pthread_exit, cancellation) counts as alive to the end. */
void recording_thread_ends(struct recording *rec, uint32_t lane);

/* The current tick, for recording_thread_begins. */
static inline uint64_t recording_now(const struct recording *rec)
{
	return rec->clock;
}

/* A block of size bytes (non-zero) aligned to align (a power of two, at most
 * PLAN_MAX_ALIGN_BYTES) now lives at address, allocated from site. Returns 0, or
 * -ENOMEM (the block is then not recorded). */
int recording_alloc(struct recording *rec, uint64_t address, uint32_t site, uint64_t size,
		    uint64_t align);

/* The block at address is freed (an address not recorded is ignored). */
void recording_free(struct recording *rec, uint64_t address);

/* A realloc of the block at old is about to run: takes it out of the address map
 * (libc may hand its address out again at once). Returns a token for
 * recording_realloc_done, RECORDING_NO_TOKEN if old was not recorded. */
#define RECORDING_NO_TOKEN UINT64_MAX
uint64_t recording_realloc_begin(struct recording *rec, uint64_t old);

/* The realloc finished: the block is now size bytes at address (may equal old), from
 * site; address 0 means libc failed and the old block lives on. site may be
 * RECORDING_NO_SITE: the old block ends and the new one is not recorded. */
#define RECORDING_NO_SITE UINT32_MAX
void recording_realloc_done(struct recording *rec, uint64_t token, uint64_t old, uint64_t address,
			    uint64_t size, uint32_t site);

/* What recording_build allocates for an image; recording_built_free frees it. */
struct recording_built {
	struct plan_site *sites;
	struct plan_pool *pools;
	struct plan_chunk *chunks;
	struct plan_entry *entries; /* decoded entries, when re-planned */
	uint64_t *blocks;	    /* else the encoded entries and their block table */
	uint8_t *encoded;
};

/* Makes the image's sites, pools and entries tables. On input image->sites[0..
 * site_count) hold each site's key and frames (site_count must be the number of
 * sites added). On success image points to tables in *built: the sites (with
 * their counts and bytes at the requested peak), the pools, and the entries
 * either encoded (entries NULL; blocks, encoded_entries, entries_bytes and
 * size_classes set, as the reader gives them) or, when re-planned, decoded; and
 * the record's entry, pool and folded counts, arena_bytes, lower_bound_bytes
 * and requested_peak_bytes are set. Blocks still alive end at infinity. The
 * entries are encoded a block at a time, each site's straight from its log,
 * which is given back once encoded. So a recording is built once (then only
 * recording_fini). With opt, the planner proper re-plans traces small enough
 * for opt->time_limit_s, and the smaller arena wins. Returns 0, -EINVAL,
 * -ENOMEM. */
int recording_build(struct recording *rec, struct plan_image *image,
		    const struct planner_options *opt, struct recording_built *built);

void recording_built_free(struct recording_built *built);
