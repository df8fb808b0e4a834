/* Call-site capture: the current stack, cut to the configured depth, reduced to
 * (module identity, offset) frames and hashed into a key that is the same in every
 * run of the same binaries, whatever ASLR does.
 *
 * The raw stack comes from a walk on learned frame sizes (frame_walk.h) where
 * every frame on it has been learned, else from an unwind, which teaches the
 * walk. Resolving frames to modules is the slow part, so it is done once per
 * distinct raw stack: a cache maps the hash of the raw return addresses (stable
 * within one process) to the site index the owner interned for it. memplan's own
 * frames are stripped by module, not by count. The calling thread's lineage name
 * (thread_lineage.h) is mixed into both hashes, so each thread's allocations form
 * sites of their own.
 *
 * Most calls need none of that: each thread caches, per call origin (the
 * shim's return address and depth), the last stack seen from it, with where
 * each of its return addresses lay on the stack. A call from the same origin
 * whose stack holds the same return addresses at the same places came the same
 * way: the same site, checked word by word, never assumed (two callers of one
 * helper at one depth are told apart). */
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "plan_file.h"
#include "thread_lineage.h"

#define CALLSITE_MAX_DEPTH PLAN_MAX_DEPTH
#define CALLSITE_UNKNOWN   UINT32_MAX
/* In the caches, a stack the interner named no site for (replay: a call site
 * the recording never saw), kept so that its next calls are not walked again:
 * an image replayed with other options walked at each call (7.6 times a plain
 * run's time). callsite_capture gives it as CALLSITE_UNKNOWN; callsite_cached
 * and callsite_walked as it is, with a cookie that is no site's. */
#define CALLSITE_UNPLANNED (UINT32_MAX - 1)

/* Where the current allocation call came from, as the exported shim saw it: its
 * return address and its frame. With the thread's stack base, they make a cheap
 * key for the cache of resolved stacks: the same call path reaches the same return
 * address at the same stack depth in every run. Only a cache miss unwinds. */
struct callsite_origin {
	uintptr_t return_address; /* 0: none recorded for this call */
	uintptr_t frame;
};

extern __thread struct callsite_origin callsite_origin __attribute__((tls_model("initial-exec")));
/* The top of the calling thread's stack as memplan knows it, or 0 if unknown:
 * where its depth is measured from. */
extern __thread uintptr_t callsite_stack_base __attribute__((tls_model("initial-exec")));
/* The calling thread's stack as its mapping goes, [low, top), or 0 and 0 if
 * unknown: a stack walk (frame_walk.h) starts only from a frame inside it, so
 * that all it reads, from there up to top, is mapped; a frame on another stack (a
 * coroutine's, a signal stack) is unwound. */
extern __thread uintptr_t callsite_stack_low __attribute__((tls_model("initial-exec")));
extern __thread uintptr_t callsite_stack_top __attribute__((tls_model("initial-exec")));

/* A frame further than this below its stack base is on some other stack (a
 * coroutine, a signal stack): its depth means nothing, so it is unwound. */
#define CALLSITE_STACK_DEPTH_MAX (UINT64_C(256) << 20)

/* Every cache here is keyed by raw addresses, which name the same code only as
 * long as the module mapped there stays: once one is unloaded (dlclose), another
 * may be mapped at its addresses. So the per-thread caches keep each address
 * XOR the salt of when they were filled, and the salt changes at each unload:
 * no entry made before matches again (two instructions on the hot path; a
 * generation number per thread took five). The shared tables are cleared by
 * the first capture that sees the new salt. */
extern _Atomic uintptr_t callsite_salt;

static inline uintptr_t callsite_salted(uintptr_t address)
{
	return address ^ atomic_load_explicit(&callsite_salt, memory_order_relaxed);
}

/* After a dlclose: if the loader did unload a module, every cache keyed by raw
 * addresses is stale from now on, and the unwinder is opened (if call sites
 * are in use) to learn the frame sizes again. Call with the guard set. */
void callsite_after_dlclose(void);

/* The per-thread cache of call origins, filled by callsite_capture: a slot per
 * (return address, depth), read without a lock, holding the last stack seen
 * from there: its site, and its return addresses past the first with where
 * they lie, as offsets from the origin's frame (the same depth puts the frame
 * at the same address). Only a usable origin (on this thread's stack, from the
 * program's code) is ever cached, so every word checked lies between the frame
 * and the stack's top, mapped. A configured depth above CALLSITE_VERIFIED + 1
 * is never cached: every call is walked.
 *
 * Four ways a set: the set of an origin hangs on its return address, which
 * ASLR moves, so with one way two hot origins shared a slot in about half of
 * the runs of the churn benchmark and took turns walking their stacks (replay
 * 1.25x slower in those runs); with two ways, three hot origins of sqlite3
 * shared a set in about one run in four, and one of them walked its stack at
 * each of its 40,000 calls (7% more instructions). An origin lives in one way
 * only: the one holding its key, else an empty one, else the set's ways in
 * turn (callsite.c, free_way).
 *
 * A thread's caches start small and grow (callsite.c, caches_grow): 4 sets,
 * doubled, up to CALLSITE_RECENT / CALLSITE_WAYS, each time a newcomer finds
 * its set full, so that a thread that allocates from a few places keeps one
 * page of them, not 13 (64 threads of 3 call sites each: 7.3 KiB resident a
 * thread before). Below the largest size no way is ever evicted. */
#define CALLSITE_RECENT	  256
#define CALLSITE_WAYS	  4
#define CALLSITE_VERIFIED 7
#define CALLSITE_LEVELS	  5 /* sizes: 4 << level sets, level < CALLSITE_LEVELS */
/* The return addresses a way checks from its own cache line: those of the
 * default depth of 6 frames past the first. */
#define CALLSITE_NEAR 5
/* A set: its ways' keys on one cache line, then each way's check on a line of
 * its own, then what a way checks past CALLSITE_NEAR and where its origin's
 * stacks split. A call from a cached origin reads two lines: with each way a
 * record of 120 bytes, the keys of a set lay on up to four and a way's check on
 * two or three more (docs/call-sites.md: sqlite3's replay missed the cache
 * 20% less so, in callgrind's simulation). */
struct callsite_key {
	uintptr_t return_address; /* salted (callsite_salted); 0: empty */
	uint32_t depth;		  /* of the origin's frame below the stack base */
	uint32_t site;
};
struct callsite_way {
	void *cookie; /* the caller's, for the site (callsite_capture) */
	/* Where each return address past the first lies, in words up from the
	 * origin's frame: a stack whose frames take more than 512 KiB is not
	 * cached. */
	uint16_t at[CALLSITE_VERIFIED];
	/* Return addresses checked past the first: from expect (the rest of
	 * which check the origin's own, callsite_way_matches), then from the
	 * set's far. */
	uint8_t near, far;
	uintptr_t expect[CALLSITE_NEAR];
};
struct callsite_far {
	uintptr_t expect[CALLSITE_VERIFIED - CALLSITE_NEAR];
	/* In an origin's way: 0, or where (in bytes up from the frame) its stacks
	 * were first seen to differ, which names the set of the split caches that
	 * holds each of its other stacks. */
	uint32_t split_at;
};
struct __attribute__((aligned(64))) callsite_set {
	struct callsite_key key[CALLSITE_WAYS];
	struct callsite_way way[CALLSITE_WAYS];
	struct callsite_far far[CALLSITE_WAYS];
};
_Static_assert(sizeof(struct callsite_key) * CALLSITE_WAYS == 64 &&
		   sizeof(struct callsite_way) == 64,
	       "a set's keys on one line, each way's check on one");

/* The other stacks of origins that many call paths reach (a wrapper's call of
 * malloc: sqlite3 makes a quarter of its calls so), one slot each, by the
 * origin and the word on the stack where its stacks differ (split_at): the
 * return address that tells the wrapper's callers apart. Its slot's stack is
 * checked as an origin's is, so a slot holding another stack, or a word that
 * is no return address (a stack of another shape), only misses. Without it,
 * such calls walked their stacks and rewrote the origin's slot at every call
 * (about 600 instructions each). Four ways a set, a stack in an empty way,
 * else the ways in turn. When it was direct-mapped (64 slots), two of
 * sqlite3's hot stacks shared a slot in about one run in four, and one of
 * them walked at each of its 40,000 calls; with two ways a set, three shared
 * a set in about one run in thirty (the statistic `walks`: 47,955 instead of
 * about 750). Half as many sets as the origins' cache at each size. */
#define CALLSITE_SPLIT	    128
#define CALLSITE_SPLIT_WAYS 4
_Static_assert(CALLSITE_SPLIT_WAYS == CALLSITE_WAYS, "both caches are made of callsite_set");
_Static_assert(CALLSITE_RECENT == CALLSITE_WAYS << (2 + CALLSITE_LEVELS - 1), "the largest size");
_Static_assert(CALLSITE_SPLIT == CALLSITE_SPLIT_WAYS << (1 + CALLSITE_LEVELS - 1), "the same");

/* A thread's caches of origins and of split stacks, made at its first call that
 * would fill them (callsite.c, own_caches) and given back when it ends. Until
 * then, and once its end has begun, the thread reads empty ones that are never
 * written, and every call is walked. They are not thread-local storage:
 * glibc puts each thread's static TLS on its stack, and pthread_create fails
 * with EINVAL when the stack asked for cannot hold it. As 52 KiB of TLS, they
 * made node's threads of 64 KiB fail, and took 52 KiB of every thread's
 * memory, allocating or not (tests/faults/test-small-stacks.sh). The sets of
 * the current size: a hash's top bits, 64 - shift of them, pick one. */
struct callsite_caches {
	struct callsite_set *recent, *split;
	unsigned recent_shift, split_shift;
};
extern __thread struct callsite_caches *callsite_caches __attribute__((tls_model("initial-exec")));
/* memplan's own code: an origin in it is no call of the program's. */
extern uintptr_t callsite_own_start, callsite_own_end;

/* An origin's hash, whose top bits pick its sets: Fibonacci hashing of the
 * 16-byte chunk of its return address (and its frame's depth, a multiple of 16
 * but for the rare frame). Of the address itself, functions laid out at a
 * fixed stride (one small wrapper or template instance over and over, 16
 * bytes apart) step by 16 times the golden ratio, nearly a ninth of a turn,
 * and crowded a few sets; of its chunk, they step by the golden ratio itself,
 * as evenly as any sequence can. Two origins in one chunk share a set, whose
 * four ways hold them. */
static inline uint64_t callsite_origin_hash(uintptr_t return_address, uint64_t depth)
{
	return ((return_address ^ depth) >> 4) * UINT64_C(0x9e3779b97f4a7c15);
}

/* The cache set of an origin: its return address and its frame's depth. */
static inline struct callsite_set *callsite_recent_set(uintptr_t return_address, uint64_t depth)
{
	const struct callsite_caches *c = callsite_caches;

	return &c->recent[callsite_origin_hash(return_address, depth) >> c->recent_shift];
}

static inline bool callsite_key_holds(const struct callsite_key *key, uintptr_t salted,
				      uint64_t depth)
{
	return key->return_address == salted && key->depth == depth;
}

/* The set of the split caches for an origin and the word at its split_at. */
static inline struct callsite_set *callsite_split_set(uintptr_t return_address, uint64_t depth,
						      uintptr_t word)
{
	const struct callsite_caches *c = callsite_caches;

	return &c->split[(callsite_origin_hash(return_address, depth) ^ word) *
			     UINT64_C(0xc2b2ae3d27d4eb4f) >>
			 c->split_shift];
}

/* Whether the stack of the origin of way w of set, whose frame is frame, holds
 * the way's return addresses where the way says. All CALLSITE_NEAR compared at
 * once, without a branch: a shorter stack's way fills the rest with the
 * origin's own return address, which lies one word above its frame (a loop
 * over the near ones took 1.6% more instructions on the allocator-bound
 * churn, callgrind). */
__attribute__((no_sanitize("address"), always_inline)) static inline bool
callsite_way_matches(const struct callsite_set *set, unsigned w, uintptr_t frame)
{
	const struct callsite_way *way = &set->way[w];

	_Static_assert(CALLSITE_NEAR == 5, "the words below");
#define CALLSITE_DIFFER(k)                                                                         \
	(*(const uintptr_t *)(frame + 8 * (uintptr_t)way->at[k]) ^ way->expect[k])
	if (CALLSITE_DIFFER(0) | CALLSITE_DIFFER(1) | CALLSITE_DIFFER(2) | CALLSITE_DIFFER(3) |
	    CALLSITE_DIFFER(4))
		return false;
#undef CALLSITE_DIFFER
	for (uint32_t k = 0; __builtin_expect(k < way->far, 0); k++)
		if (*(const uintptr_t *)(frame + 8 * (uintptr_t)way->at[CALLSITE_NEAR + k]) !=
		    set->far[w].expect[k])
			return false;
	return true;
}

/* The site of a call from this origin (the exported function's return address,
 * never 0, and frame) if this thread's cache holds the stack it came by, with
 * the cookie as callsite_capture gives it; else CALLSITE_UNKNOWN, and only
 * callsite_walked or callsite_capture can tell. It reads the caller's frames,
 * which AddressSanitizer would not expect. Does not allocate, takes no lock. */
__attribute__((no_sanitize("address"), always_inline)) static inline uint32_t
callsite_cached(uintptr_t return_address, uintptr_t frame, void ***cookie)
{
	uint64_t depth = callsite_stack_base - frame;
	const uintptr_t salted = callsite_salted(return_address);
	struct callsite_set *set = callsite_recent_set(return_address, depth);
	unsigned w = 0;

	_Static_assert(CALLSITE_WAYS == 4, "the ways below");
	if (!callsite_key_holds(&set->key[w], salted, depth) &&
	    !callsite_key_holds(&set->key[++w], salted, depth) &&
	    !callsite_key_holds(&set->key[++w], salted, depth) &&
	    !callsite_key_holds(&set->key[++w], salted, depth))
		return CALLSITE_UNKNOWN;
	if (!callsite_way_matches(set, w, frame)) {
		const uint32_t split_at = set->far[w].split_at;
		if (!split_at)
			return CALLSITE_UNKNOWN;
		set = callsite_split_set(return_address, depth,
					 *(const uintptr_t *)(frame + split_at));
		for (w = 0; !(callsite_key_holds(&set->key[w], salted, depth) &&
			      callsite_way_matches(set, w, frame));)
			if (++w == CALLSITE_WAYS)
				return CALLSITE_UNKNOWN;
	}
	*cookie = (void **)&set->way[w].cookie;
	return set->key[w].site;
}

/* Sets callsite_stack_low and callsite_stack_top for the calling thread. glibc
 * reads them from the thread's descriptor (for the main thread, from its
 * mappings and stack limit) and allocates on the way. Call with the guard set. */
void callsite_note_stack(void);

/* The same for the main thread, at start-up, once callsite_stack_base holds
 * __libc_stack_end, without glibc's stdio (main_stack.h). */
void callsite_note_main_stack(void);

/* Notes the call origin of an exported function: its return address and frame. */
static inline void callsite_mark(uintptr_t return_address, uintptr_t frame)
{
	callsite_origin.return_address = return_address;
	callsite_origin.frame = frame;
}

/* Notes the caller of the exported function this is expanded in. */
#define CALLSITE_MARK()                                                                            \
	callsite_mark((uintptr_t)__builtin_return_address(0), (uintptr_t)__builtin_frame_address(0))

/* Maps a newly seen stable stack to a site index (or CALLSITE_UNKNOWN); the result
 * is cached for the raw stack. Called with the call-site lock held and the guard
 * set; frames[].module indexes callsite_modules(). */
struct callsite_interner {
	uint32_t (*intern)(void *ctx, uint64_t key, const struct plan_frame *frames,
			   uint32_t frame_count);
	void *ctx;
	/* Whether intern reads the frames' modules: if not (replay, which needs
	 * only the key), frames[].module is 0 and the module list stays empty. */
	bool reads_modules;
	/* Whether intern gives every stack a site (recording). If not (replay,
	 * which knows only the plan's sites), a walk gone wrong through a frame
	 * size that no longer holds names no site: then only the walks that name
	 * none are checked against an unwind (capture_uncached), and a replay whose
	 * stacks all name sites never loads the unwinder's code and tables. */
	bool names_every_stack;
};

/* Sets the depth (1..CALLSITE_MAX_DEPTH) and the interner. Returns 0, -EINVAL
 * for a depth out of range (every buffer here holds CALLSITE_MAX_DEPTH frames),
 * or -ENOMEM.
 * Call once, with the guard set, before any capture. */
int callsite_init(unsigned depth, const struct callsite_interner *interner);

/* callsite_cached for a call that came another way than the origin's cached
 * stack (a wrapper's call of malloc, reached from many places at one depth):
 * the site of the stack walked from it on learned frame sizes, if this
 * thread's cache of walked stacks knows it; the origin's slot then holds that
 * stack. Else CALLSITE_UNKNOWN, and only callsite_capture can tell (it also
 * makes the walks' checks against an unwind, and learns). Does not
 * allocate, takes no lock. */
uint32_t callsite_walked(uintptr_t return_address, uintptr_t frame, void ***cookie);

/* Stacks this process walked so far: calls that neither of the thread's caches
 * named (a first call from a stack, or one the caches had let go). Hot stacks
 * evicting each other show here (replay's statistic `walks`). Thread-safe. */
uint64_t callsite_walks(void);

/* Counts walks from zero again: a forked child's are its own. */
void callsite_walks_reset(void);

/* The site of the caller's allocation, as the interner named it. Thread-safe.
 * Call with the guard set (it may allocate through libc on a new stack).
 * cookie (may be NULL): set to one pointer of the caller's own that the calling
 * thread's cache keeps for the site (NULL until the caller stores something), so
 * that what the caller finds by site (a hash or table lookup) takes no further
 * load next time; set to NULL when the site did not come from that cache. Valid
 * until the thread's next capture. */
uint32_t callsite_capture(void ***cookie);

/* The modules that frames refer to, and the string table holding their paths, for
 * writing a plan. Call with the call-site lock held (see callsite_lock). */
void callsite_modules(const struct plan_module **modules, uint32_t *module_count,
		      const char **strings, uint64_t *strings_bytes);

/* The frame sizes the stack walks learned (frame_walk.h), for the plan: each
 * (module, offset) once, sorted, its module added to callsite_modules' list if
 * it was not there, so call it before that. Sets *sizes to a malloc'ed array
 * (NULL if none), *count, and *complete if no size learned was lost
 * (frame_walk_complete: PLAN_IMAGE_FRAME_SIZES). Returns 0 or -ENOMEM. Call
 * with the call-site lock held. */
int callsite_frame_sizes(struct plan_frame_size **sizes, uint32_t *count, bool *complete);

/* Starts the stack walks from the frame sizes of a plan's image: those of its
 * modules that are loaded now (the same key, and no other loaded module with
 * it); those of the others are kept and seeded when the module is loaded.
 * Returns whether walks alone can name every site of the image: the plan
 * gives the size of every frame of their stacks but the last, or marks it as
 * varying (walked by its frame pointer, frame_walk). If not, replay opens the
 * unwinder (frame_walk_open_unwinder); if so, a stack that a walk cannot
 * finish goes to libc. Call after callsite_init, with the guard set. */
bool callsite_seed_frame_sizes(const struct plan_image *image);

/* Makes the calling thread's caches now rather than at its first capture:
 * replay's start-up maps them for the main thread with the arena, so that a
 * program that then lowers its address-space limit (RLIMIT_AS) still has
 * them. Call with the guard set. */
void callsite_prepare_thread(void);

/* Held while writing a plan so that the module list does not move. */
void callsite_lock(void);
void callsite_unlock(void);

/* After fork, in the child: the lock may have been held by a thread that is gone. */
void callsite_after_fork_child(void);

/* Forgets which site each stack was found to be, for a process that has just
 * changed what the interner numbers (a forked child that replays a plan of its
 * own), and which modules the plan gave every frame size of (seed the new
 * image's). Only the calling thread's caches are cleared: call it with one
 * thread. */
void callsite_forget_sites(void);

/* The identity key of the main executable. Call with the guard set. */
uint64_t callsite_main_module_key(void);
