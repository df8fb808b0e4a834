/* A recording in progress, planned as it goes: each allocation gets its offset
 * from an online offset allocator (offset_allocator.h) the moment it happens, so
 * when the program ends the plan is already made and only has to be written;
 * nothing proportional to the trace is sorted or packed at exit.
 *
 * Each entry is written once, when its block ends: what it will say is kept in
 * the block's live slot meanwhile (slots are reused last-freed first, so they stay
 * in cache), and at the end it goes to its site's log of ended entries, at the
 * index of its occurrence (most blocks end soon after they start, so this is
 * close to a sequential write). So the log is in occurrence order as it is, and
 * recording_build encodes it from there. The rare parts of an entry stay out of
 * the hot path: the alignment of the few blocks aligned beyond a granule, and the
 * in-place reallocs, are kept in side lists.
 *
 * Time is a logical clock: one tick per allocation or free. A realloc that moves
 * takes two: the new block starts, then the old one ends, since both are alive
 * during the copy. A realloc that fits its block (rounded to granules) stays
 * there: its entry takes no space of its own, names the entry whose block it
 * continues (in_place_of), and that entry's lifetime stretches over it.
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
 * Addresses are only keys: the recording never touches the memory. Pure: no
 * global state; not thread-safe (the caller orders events under its own lock). */
#pragma once

#include <stdint.h>

#include "addr_map.h"
#include "offset_allocator.h"
#include "plan_file.h"
#include "planner.h"

/* An entry whose block has ended, in its site's log (no alignment: see aligned). */
struct recording_ended {
	uint64_t size, offset, t_start, t_end;
	uint32_t occurrence;
	uint32_t align_log2; /* 0 until recording_build notes it (see aligned) */
};

struct recording_site {
	uint64_t count; /* entries so far: the next one's occurrence */
	uint32_t lane;	/* the lane its blocks are packed in */
	/* Its ended entries, each at the index of its occurrence (a slot of zeros for
	 * one that has not ended); a slot for every block it started, so ending never
	 * fails. */
	struct recording_ended *ended;
	uint64_t ended_capacity;
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

/* A block alive now, found by its address: its own entry, until it ends. */
struct recording_live {
	uint64_t t_start, size;
	uint32_t site, occurrence; /* site: RECORDING_NO_SITE when the slot is unused */
	uint32_t range;		   /* in the offset allocator; next free slot when unused */
	uint32_t current;	   /* the in-place realloc now using it, or NO_IN_PLACE */
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
	uint64_t clock, entry_count, live_bytes, peak_bytes;
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
	struct plan_entry *entries; /* decoded entries, when re-planned */
	uint64_t *blocks;	    /* else the encoded entries and their block table */
	uint8_t *encoded;
};

/* Makes the image's sites and entries tables. On input image->sites[0..site_count)
 * hold each site's key and frames (site_count must be the number of sites added).
 * On success image points to tables in *built: the sites, and the entries either
 * encoded (entries NULL; blocks, encoded_entries, entries_bytes and size_classes
 * set, as the reader gives them) or, when re-planned, decoded; and the record's
 * entry_count, arena_bytes and lower_bound_bytes are set. Blocks still alive end
 * at infinity. The entries are encoded a block at a time, each site's straight
 * from its log, which is given back once encoded: the whole trace is never
 * expanded, and the logs shrink as the plan grows. So a recording is built once
 * (then only recording_fini). With opt, the
 * planner proper re-plans traces small enough for opt->time_limit_s, and the
 * smaller arena wins. Returns 0, -EINVAL, -ENOMEM. */
int recording_build(struct recording *rec, struct plan_image *image,
		    const struct planner_options *opt, struct recording_built *built);

void recording_built_free(struct recording_built *built);
