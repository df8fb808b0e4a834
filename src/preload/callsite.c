/* Call-site capture, see callsite.h. */
#define _GNU_SOURCE
#include "callsite.h"

#include <errno.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "addr_map.h"
#include "big_bss.h"
#include "frame_walk.h"
#include "guard.h"
#include "hash64.h"
#include "init.h"
#include "lone_atomic.h"
#include "main_stack.h"
#include "modules.h"
#include "prefault.h"
#include "thread_lineage.h"

/* While recording, stack walks are checked by unwinding (stack_of): a thread
 * checks one walk after WALK_CHECK_GAP_MIN, and the gap doubles while checks
 * agree, up to WALK_CHECK_GAP_MAX; a disagreement starts it again from the
 * least. An unwind costs some microseconds on a deep stack (3 us in sqlite3,
 * with libunwind): at the least gap these checks took 7% of a replay of it.
 * Replay checks only the walks that name no site (capture_uncached). */
#define WALK_CHECK_GAP_MIN 64
#define WALK_CHECK_GAP_MAX 4096

__thread struct callsite_origin callsite_origin __attribute__((tls_model("initial-exec")));
__thread uintptr_t callsite_stack_base __attribute__((tls_model("initial-exec")));
__thread uintptr_t callsite_stack_low __attribute__((tls_model("initial-exec")));
__thread uintptr_t callsite_stack_top __attribute__((tls_model("initial-exec")));

_Atomic uintptr_t callsite_salt;
/* The sites of stacks walked from origins whose cached stack was another, by
 * the hash of their raw return addresses. */
struct recent_stack {
	uint64_t raw; /* salted (callsite_salted); 0: empty */
	uint32_t site;
	void *cookie;
};

/* All of a thread's caches (callsite.h, struct callsite_caches), in one
 * mapping of its own: this header, then their sets at the current size
 * (caches_set_level). Sets past those of the current size are all zero. */
struct __attribute__((aligned(64))) thread_caches {
	struct callsite_caches shared; /* first: callsite_caches points at it */
	struct recent_stack *stacks;   /* by raw key & stacks_mask */
	uint32_t stacks_mask;
	uint32_t level; /* callsite.h, CALLSITE_LEVELS */
	/* Where each full set of the origins' and of the split stacks' caches
	 * puts its next newcomer: its ways in turn. A fixed victim (the last way)
	 * let a stack that came first and was never used again keep its way while
	 * two hot ones took turns in the other: sqlite3's wrapper of malloc fills
	 * a hundred slots of the split caches, and one of its stacks walked at
	 * each of its 40,000 calls in most runs. */
	uint8_t recent_victim[CALLSITE_RECENT / CALLSITE_WAYS];
	uint8_t split_victim[CALLSITE_SPLIT / CALLSITE_SPLIT_WAYS];
	struct thread_caches *next_spare;
};

/* At each level: 4 << level sets of origins, half as many of split stacks,
 * and 16 << level raw stacks, one after the other. */
static size_t caches_bytes(uint32_t level)
{
	return (4 * sizeof(struct callsite_set) + 2 * sizeof(struct callsite_set) +
		16 * sizeof(struct recent_stack))
	       << level;
}

#define CACHES_MAP_BYTES (sizeof(struct thread_caches) + caches_bytes(CALLSITE_LEVELS - 1))

/* Points tc's caches at their sets for level, which must be all zero. */
static void caches_set_level(struct thread_caches *tc, uint32_t level)
{
	struct callsite_set *sets = (struct callsite_set *)(tc + 1);

	tc->level = level;
	tc->shared.recent = sets;
	tc->shared.split = sets + ((size_t)4 << level);
	tc->shared.recent_shift = 62 - level;
	tc->shared.split_shift = 63 - level;
	tc->stacks = (struct recent_stack *)(tc->shared.split + ((size_t)2 << level));
	tc->stacks_mask = (16u << level) - 1;
}

/* Empties tc's caches and gives them the least size. */
static void caches_reset(struct thread_caches *tc)
{
	memset(tc + 1, 0, caches_bytes(tc->level));
	memset(tc->recent_victim, 0, sizeof(tc->recent_victim));
	memset(tc->split_victim, 0, sizeof(tc->split_victim));
	caches_set_level(tc, 0);
}

/* Doubles tc's caches, emptied (their entries' places move): false if they
 * have their largest size. Entries are found again by walking, a few hundred
 * instructions each, at most four times per thread. */
static bool caches_grow(struct thread_caches *tc)
{
	uint32_t level = tc->level;

	if (level + 1 >= CALLSITE_LEVELS)
		return false;
	caches_reset(tc);
	caches_set_level(tc, level + 1);
	/* The slots past the old size: a thread that outgrew its caches hashes
	 * enough stacks into them to read and then write nearly every page. */
	char *slots = (char *)(tc + 1);
	prefault_write(slots + caches_bytes(level), caches_bytes(level + 1) - caches_bytes(level));
	return true;
}

_Static_assert(sizeof(struct thread_caches) % _Alignof(struct callsite_set) == 0,
	       "sets follow the header");

/* What a thread without caches of its own reads: every way empty (no salted
 * address is 0), never written; at the least size. */
static struct callsite_set no_recent[4] BIG_BSS, no_split[2] BIG_BSS;
static struct recent_stack no_stacks[16] BIG_BSS;
static struct thread_caches no_caches = {
    .shared = {.recent = no_recent, .split = no_split, .recent_shift = 62, .split_shift = 63},
    .stacks = no_stacks,
    .stacks_mask = 15,
};
__thread struct callsite_caches *callsite_caches __attribute__((tls_model("initial-exec"))) =
    &no_caches.shared;
/* Set once the thread gave its caches back (its end has begun): what it
 * allocates from then on is walked, and no caches are made for it again. */
static __thread bool caches_retired __attribute__((tls_model("initial-exec")));
/* Gives a thread's caches back when it ends (retire_caches). */
static pthread_key_t caches_key;
static bool caches_key_made;
static void retire_caches(void *caches);
static __thread uint32_t walks_since_check __attribute__((tls_model("initial-exec")));
/* Stacks walked in this process: the call-site caches' misses (callsite_walks). */
static _Atomic uint64_t walks;
static __thread uint32_t walk_check_gap __attribute__((tls_model("initial-exec"))); /* 0: least */

/* Around the tables that captures read and fill; not taken while the process has
 * one thread (lone_lock): a signal handler on this thread keeps out while the
 * guard is set. */
static pthread_mutex_t callsite_mutex = PTHREAD_MUTEX_INITIALIZER;
static unsigned callsite_depth;
static struct callsite_interner interner;
static struct addr_map raw_to_site;
static struct module_table modules;
static uintptr_t tables_salt; /* the salt raw_to_site and the frame sizes are of */
uintptr_t callsite_own_start, callsite_own_end;

/* The modules whose every frame size the plan gave (callsite_seed_frame_sizes).
 * A recording that kept all it learned (PLAN_IMAGE_FRAME_SIZES) holds the size
 * or the mark of every frame but the last of each stack it saw: a walk of
 * replay that meets a frame of theirs with no size is on a stack that names no
 * site of the plan, and is not unwound to find which. Written before threads
 * walk; emptied when the sizes are forgotten. */
#define SEEDED_MODULES_MAX 64
static struct {
	uintptr_t start, end;
} seeded_modules[SEEDED_MODULES_MAX] BIG_BSS;
static _Atomic uint32_t seeded_module_count;

static bool in_seeded_module(uintptr_t ip)
{
	uint32_t n = atomic_load_explicit(&seeded_module_count, memory_order_acquire);

	for (uint32_t i = 0; i < n; i++)
		if (ip >= seeded_modules[i].start && ip < seeded_modules[i].end)
			return true;
	return false;
}

/* Modules that recorded frames refer to, in first-seen order, for the plan. */
static struct plan_module *plan_modules;
static uint32_t plan_module_count, plan_module_cap;
static char *plan_strings;
static uint64_t plan_strings_bytes, plan_strings_cap;
static struct addr_map module_key_to_index;

int callsite_init(unsigned depth, const struct callsite_interner *in)
{
	const struct module *own;
	int r;

	if (depth < 1 || depth > CALLSITE_MAX_DEPTH)
		return -EINVAL;
	callsite_depth = depth;
	interner = *in;
	/* Small to start: glibc clears what calloc takes from its heap, and 1,024
	 * stacks' room was 32 KiB of every process's resident set; it grows. */
	if (addr_map_init(&raw_to_site, 64) < 0 || addr_map_init(&module_key_to_index, 64) < 0)
		return -ENOMEM;
	frame_walk_init(); /* without it, every stack is unwound */
	/* Without it, threads walk every call (own_caches). Once per process:
	 * a forked child keeps its parent's keys. */
	if (!caches_key_made)
		caches_key_made = pthread_key_create(&caches_key, retire_caches) == 0;
	/* A recording unwinds every stack it has not seen; a replay may need no
	 * unwind at all (callsite_seed_frame_sizes). */
	if (in->names_every_stack && frame_walk_open_unwinder() < 0)
		return -ENOENT;
	r = module_table_refresh(&modules);
	if (r < 0)
		return r;
	/* memplan's own frames are recognised by module: this one. */
	own = module_table_find(&modules, (uintptr_t)callsite_init);
	if (own) {
		callsite_own_start = own->start;
		callsite_own_end = own->end;
	}
	return 0;
}

/* The plan-module index for m, adding it on first sight. UINT32_MAX on ENOMEM. */
static uint32_t plan_module_index(const struct module *m)
{
	uint64_t index;
	size_t path_bytes = strlen(m->path);

	if (addr_map_get(&module_key_to_index, m->key | 1, &index))
		return (uint32_t)index;
	if (plan_module_count == plan_module_cap) {
		uint32_t cap = plan_module_cap ? 2 * plan_module_cap : 16;
		struct plan_module *grown = realloc(plan_modules, cap * sizeof(*grown));
		if (!grown)
			return UINT32_MAX;
		plan_modules = grown;
		plan_module_cap = cap;
	}
	while (plan_strings_bytes + path_bytes + 1 > plan_strings_cap) {
		uint64_t cap = plan_strings_cap ? 2 * plan_strings_cap : 4096;
		char *grown = realloc(plan_strings, cap);
		if (!grown)
			return UINT32_MAX;
		plan_strings = grown;
		plan_strings_cap = cap;
	}
	struct plan_module *pm = &plan_modules[plan_module_count];
	memset(pm, 0, sizeof(*pm));
	pm->key = m->key;
	pm->path_offset = (uint32_t)plan_strings_bytes;
	pm->path_bytes = (uint32_t)path_bytes;
	pm->build_id_bytes = m->build_id_bytes;
	memcpy(pm->build_id, m->build_id, m->build_id_bytes);
	memcpy(plan_strings + plan_strings_bytes, m->path, path_bytes + 1);
	plan_strings_bytes += path_bytes + 1;
	if (addr_map_put(&module_key_to_index, m->key | 1, plan_module_count) < 0)
		return UINT32_MAX;
	return plan_module_count++;
}

static const struct module unknown_module = {.key = 0, .path = (char *)"[unknown]"};

/* Resolves raw return addresses to stable frames and interns the site. */
static uint32_t resolve_site(void *const *ips, int raw_count)
{
	struct plan_frame frames[CALLSITE_MAX_DEPTH];
	uint64_t key_parts[2 * CALLSITE_MAX_DEPTH];
	int count = 0;

	for (int k = 0; k < raw_count; k++) {
		uintptr_t ip = (uintptr_t)ips[k];
		/* memplan's own frames below the program's (the wrapper that starts each
		 * thread) are left out too: with them in, every rebuild of memplan would
		 * change the keys of every thread's sites, and a plan would no longer
		 * match the program it was recorded from. */
		if (ip >= callsite_own_start && ip < callsite_own_end)
			continue;
		int i = count++;
		const struct module *m = module_table_find(&modules, ip);
		if (!m && module_table_refresh(&modules) == 0)
			m = module_table_find(&modules, ip);
		/* JIT or unmapped code has no stable offset: one shared unknown module. */
		if (!m)
			m = &unknown_module;
		frames[i].module = interner.reads_modules ? plan_module_index(m) : 0;
		frames[i].reserved = 0;
		frames[i].offset = m == &unknown_module ? 0 : ip - m->base;
		if (frames[i].module == UINT32_MAX)
			return CALLSITE_UNKNOWN; /* out of memory: do not cache a half site */
		key_parts[2 * i] = m->key;
		key_parts[2 * i + 1] = frames[i].offset;
	}
	/* The thread's name is part of the site: each thread keeps its own occurrences. */
	uint64_t key = hash64(key_parts, (size_t)count * 2 * sizeof(uint64_t), thread_lineage);
	return interner.intern(interner.ctx, key, frames, (uint32_t)count);
}

/* The marked call origin, taken (one use per mark). */
static struct callsite_origin take_origin(void)
{
	/* Field by field: the shim has just stored them one by one, and one load of
	 * both (which the compiler would make of a struct copy) cannot be forwarded
	 * from those stores, so it waits for them to reach the cache. */
	struct callsite_origin origin = {
	    __atomic_load_n(&callsite_origin.return_address, __ATOMIC_RELAXED),
	    __atomic_load_n(&callsite_origin.frame, __ATOMIC_RELAXED),
	};

	callsite_origin.return_address = 0;
	return origin;
}

/* Unwinds the calling thread into ips (and at), up to the depth, and learns
 * from it. walked: how many frames a walk on learned sizes gave in ips, to
 * compare the unwind with, or negative if none; a disagreement starts this
 * thread's checks again from the least gap (stack_of), an agreement doubles
 * the gap. *agreed: whether the unwind gave the walk's frames. Returns how
 * many frames: 0 if the unwinder is not open (callsite_seed_frame_sizes). */
static int unwind_stack(int walked, void **ips, uintptr_t *at, bool *agreed)
{
	uintptr_t sps[CALLSITE_MAX_DEPTH];
	void *walk[CALLSITE_MAX_DEPTH];
	bool outermost;

	if (walked >= 0)
		memcpy(walk, ips, (size_t)walked * sizeof(*ips));
	int n = frame_walk_unwind(callsite_own_start, callsite_own_end, ips, sps,
				  (int)callsite_depth, &outermost);
	for (int k = 0; k < n; k++)
		at[k] = sps[k] - sizeof(uintptr_t);
	if (walked >= 0) {
		uint32_t gap = walk_check_gap ? walk_check_gap : WALK_CHECK_GAP_MIN;
		*agreed = n == walked && !memcmp(walk, ips, (size_t)n * sizeof(*ips));
		walk_check_gap = !*agreed		    ? WALK_CHECK_GAP_MIN
				 : gap < WALK_CHECK_GAP_MAX ? 2 * gap
							    : gap;
		walks_since_check = 0;
		if (*agreed)
			return n;
	}
	*agreed = false;
	bool held = lone_lock(&callsite_mutex);
	frame_walk_learn(ips, sps, n, outermost, !outermost && n < (int)callsite_depth,
			 callsite_stack_top);
	lone_unlock(&callsite_mutex, held);
	return n;
}

/* The frame pointer register as the shim's caller left it, which the shim's
 * prologue saved at the bottom of its frame, for walks through frames sized at
 * run time (frame_walk). Not while recording, whose walks go through none of
 * them: a wrong guess there would be written into the plan. */
static uintptr_t frame_pointer_of(uintptr_t shim_frame)
{
	return interner.names_every_stack ? FRAME_WALK_NO_FP : *(const uintptr_t *)shim_frame;
}

/* frame_walk from the shim whose return address and frame these are: its
 * caller's stack pointer is two words up. */
static int walk_from(uintptr_t return_address, uintptr_t shim_frame, void **ips, uintptr_t *at,
		     uintptr_t *unlearned)
{
	atomic_fetch_add_explicit(&walks, 1, memory_order_relaxed);
	return frame_walk(return_address, shim_frame + 2 * sizeof(uintptr_t),
			  frame_pointer_of(shim_frame), callsite_stack_top, ips, at,
			  (int)callsite_depth, unlearned);
}

/* Frame sizes of modules loaded after start-up (callsite_seed_frame_sizes). */
static _Atomic uint32_t late_pending;
static bool seed_late_modules(void);

/* A plan holds no size of memplan's own frames, and the one through which
 * the program's code runs on a thread, start_named_thread's, keeps a frame
 * pointer (it takes its frame's address): replay walks a return address of
 * memplan's as it would a frame sized at run time. True if ra is one. */
static bool own_frame_by_frame_pointer(uintptr_t ra)
{
	if (ra < callsite_own_start || ra >= callsite_own_end)
		return false;
	bool held = lone_lock(&callsite_mutex);
	bool known = frame_walk_seed(ra, FRAME_WALK_VARIES);
	lone_unlock(&callsite_mutex, held);
	return known;
}

/* The caller's return addresses, up to the depth, into ips, and where each lies
 * on the stack into at: walked from the origin when its frames are learned,
 * else unwound, which teaches the walk. *unchecked: set if walked and not
 * compared with an unwind (the caller checks it if it names no site). Returns
 * how many: 0 for an allocation of the unwinder's own, which has no site, and
 * for a stack that names none, whose first *named_none frames (else 0) are
 * then in ips and at: every stack that starts with them names none. */
static int stack_of(struct callsite_origin origin, void **ips, uintptr_t *at, bool *unchecked,
		    int *named_none)
{
	int n = FRAME_WALK_NEVER;
	uintptr_t unlearned = 0;

	*unchecked = false;
	*named_none = 0;
	if (frame_walk_from_unwinder(origin.return_address))
		return 0;
	if (origin.return_address && origin.frame >= callsite_stack_low &&
	    origin.frame < callsite_stack_top)
		n = walk_from(origin.return_address, origin.frame, ips, at, &unlearned);
	/* Replay: a walk that finishes is checked by the caller if it names no
	 * site; one that meets a frame with no size in a module the plan gave
	 * every size of names none (seeded_modules). */
	if (!interner.names_every_stack) {
		if (n == FRAME_WALK_LEARNING &&
		    (own_frame_by_frame_pointer(unlearned) ||
		     (!in_seeded_module(unlearned) &&
		      atomic_load_explicit(&late_pending, memory_order_relaxed) &&
		      seed_late_modules())))
			n = walk_from(origin.return_address, origin.frame, ips, at, &unlearned);
		if (n >= 0) {
			*unchecked = true;
			return n;
		}
		if (n == FRAME_WALK_LEARNING && in_seeded_module(unlearned)) {
			/* The plan gave every size of that module, and none
			 * for this return address: the same frames up to it
			 * always stop here (frame_walk.h). */
			int k = 0;
			while (k < (int)callsite_depth && (uintptr_t)ips[k] != unlearned)
				k++;
			*named_none = k < (int)callsite_depth ? k + 1 : 0;
			return 0;
		}
	}
	/* A frame that keeps one size long enough to be trusted and then changes it
	 * would be walked wrong: now and then (WALK_CHECK_GAP_MIN) a walk is compared
	 * with an unwind, and if they differ, the unwind teaches the walk (which
	 * finds the change and stops the walks through it). */
	uint32_t gap = walk_check_gap ? walk_check_gap : WALK_CHECK_GAP_MIN;
	if (n >= 0 && ++walks_since_check < gap)
		return n;
	bool agreed;
	return unwind_stack(n, ips, at, &agreed);
}

/* The hash of a raw stack, by which the caches know it. */
static uint64_t raw_key(void *const *ips, int count)
{
	return hash64(ips, (size_t)count * sizeof(void *), thread_lineage) | 1;
}

/* Whether the origin may be cached: on this thread's stack, from the program's
 * code (callsite.h). */
static bool usable(uintptr_t return_address, uintptr_t frame)
{
	uintptr_t base = callsite_stack_base;

	return return_address && base && frame >= callsite_stack_low && frame < base &&
	       base - frame < CALLSITE_STACK_DEPTH_MAX &&
	       !(return_address >= callsite_own_start && return_address < callsite_own_end);
}

/* The return address way w of set checks k-th. */
static uintptr_t way_expects(const struct callsite_set *set, unsigned w, uint32_t k)
{
	return k < CALLSITE_NEAR ? set->way[w].expect[k] : set->far[w].expect[k - CALLSITE_NEAR];
}

/* Where (as split_at) the stack ips[0..n), whose return addresses lie at
 * at[0..n), first differs from the one way w of set holds: 0 if nowhere
 * within both. The frames below that one are the same, so both stacks have a
 * return address there. */
static uint32_t split_of(const struct callsite_set *set, unsigned w, uintptr_t frame,
			 void *const *ips, const uintptr_t *at, int n)
{
	const struct callsite_way *way = &set->way[w];

	for (uint32_t k = 1; k < (uint32_t)n && k - 1 < (uint32_t)way->near + way->far; k++) {
		const uintptr_t held = 8 * (uintptr_t)way->at[k - 1];
		if (at[k] - frame != held || (uintptr_t)ips[k] != way_expects(set, w, k - 1))
			return held == at[k] - frame ? (uint32_t)held : 0;
	}
	return 0;
}

/* An empty way of set, else the one *victim says (which moves on). */
static unsigned free_way(const struct callsite_set *set, uint8_t *victim)
{
	for (unsigned k = 0; k < CALLSITE_WAYS; k++)
		if (!set->key[k].return_address)
			return k;
	const unsigned w = *victim % CALLSITE_WAYS;
	*victim = (uint8_t)((*victim + 1) % CALLSITE_WAYS);
	return w;
}

/* The way of set that holds the origin, or CALLSITE_WAYS. */
static unsigned holder(const struct callsite_set *set, uintptr_t salted, uint64_t depth)
{
	unsigned k = 0;

	while (k < CALLSITE_WAYS && !callsite_key_holds(&set->key[k], salted, depth))
		k++;
	return k;
}

static bool set_full(const struct callsite_set *set)
{
	for (unsigned k = 0; k < CALLSITE_WAYS; k++)
		if (!set->key[k].return_address)
			return false;
	return true;
}

/* Makes the stack ips[0..n), whose return addresses lie at at[0..n), the
 * origin's cached one in tc (the calling thread's own caches), for site, whose
 * cookie is cookie: where the slot keeps it, or the cookie as it was if the
 * stack cannot be checked there (its first return address is not the
 * origin's, it is deeper than CALLSITE_VERIFIED + 1 frames, or a return
 * address lies where an offset cannot say). An origin whose slot holds another
 * stack keeps that one: this one goes to the slot of the split caches for the
 * word where the two differ. A newcomer whose set is full makes the caches
 * grow, while they can: cookie (which may point into them) is read first. It
 * reads the caller's frames, which AddressSanitizer would not expect. */
__attribute__((no_sanitize("address"))) static void **
remember(struct thread_caches *tc, uintptr_t return_address, uintptr_t frame, void *const *ips,
	 const uintptr_t *at, int n, uint32_t site, void **cookie)
{
	struct callsite_set *set;
	unsigned w;
	uint64_t depth = callsite_stack_base - frame;

	if (n < 1 || n > CALLSITE_VERIFIED + 1 || (uintptr_t)ips[0] != return_address ||
	    !usable(return_address, frame))
		return cookie;
	for (int k = 1; k < n; k++)
		if (at[k] <= frame || (at[k] - frame) % 8 || (at[k] - frame) / 8 > UINT16_MAX)
			return cookie;
	/* What a way shorter than CALLSITE_NEAR checks in its spare places. */
	if (*(const uintptr_t *)(frame + 8) != return_address)
		return cookie;
	void *const value = *cookie;
	const uintptr_t salted = callsite_salted(return_address);
again:
	set = callsite_recent_set(return_address, depth);
	w = holder(set, salted, depth);
	uint32_t split_at = 0;
	if (w < CALLSITE_WAYS) {
		if (!set->far[w].split_at)
			set->far[w].split_at = split_of(set, w, frame, ips, at, n);
		split_at = set->far[w].split_at;
	} else {
		if (set_full(set) && caches_grow(tc))
			goto again;
		w = free_way(set, &tc->recent_victim[set - tc->shared.recent]);
	}
	/* The word callsite_cached will read there: the frames below it are the
	 * origin's, so it lies on this thread's stack, mapped. */
	if (split_at) {
		set = callsite_split_set(return_address, depth,
					 *(const uintptr_t *)(frame + split_at));
		if (set_full(set) && caches_grow(tc))
			goto again;
		w = free_way(set, &tc->split_victim[set - tc->shared.split]);
	}
	struct callsite_way *way = &set->way[w];
	set->key[w] =
	    (struct callsite_key){.return_address = salted, .depth = (uint32_t)depth, .site = site};
	set->far[w].split_at = 0;
	way->cookie = value;
	way->near = (uint8_t)(n - 1 < CALLSITE_NEAR ? n - 1 : CALLSITE_NEAR);
	way->far = (uint8_t)(n - 1 - way->near);
	for (int k = 1; k < n; k++) {
		way->at[k - 1] = (uint16_t)((at[k] - frame) / 8);
		if (k - 1 < CALLSITE_NEAR)
			way->expect[k - 1] = (uintptr_t)ips[k];
		else
			set->far[w].expect[k - 1 - CALLSITE_NEAR] = (uintptr_t)ips[k];
	}
	/* The shim's return address, the word above its frame: always there. */
	for (int k = n - 1; k < CALLSITE_NEAR; k++) {
		way->at[k] = 1;
		way->expect[k] = return_address;
	}
	return &way->cookie;
}

uint32_t callsite_walked(uintptr_t return_address, uintptr_t frame, void ***cookie)
{
	void *ips[CALLSITE_MAX_DEPTH];
	uintptr_t at[CALLSITE_MAX_DEPTH];
	uint32_t gap = walk_check_gap ? walk_check_gap : WALK_CHECK_GAP_MIN;

	/* The walk that is due for its check is left to stack_of. */
	if (!usable(return_address, frame) ||
	    (interner.names_every_stack && walks_since_check + 1 >= gap))
		return CALLSITE_UNKNOWN;
	uintptr_t unlearned;
	int n = walk_from(return_address, frame, ips, at, &unlearned);
	if (n <= 0)
		return CALLSITE_UNKNOWN;
	walks_since_check++;
	uint64_t raw = raw_key(ips, n);
	/* A thread with no caches of its own finds nothing here (no_caches). */
	struct thread_caches *tc = (struct thread_caches *)callsite_caches;
	struct recent_stack *stack = &tc->stacks[raw & tc->stacks_mask];
	if (stack->raw != callsite_salted(raw))
		return CALLSITE_UNKNOWN;
	*cookie = remember(tc, return_address, frame, ips, at, n, stack->site, &stack->cookie);
	return stack->site;
}

void callsite_walks_reset(void)
{
	atomic_store_explicit(&walks, 0, memory_order_relaxed);
}

uint64_t callsite_walks(void)
{
	return atomic_load_explicit(&walks, memory_order_relaxed);
}

void callsite_note_stack(void)
{
	pthread_attr_t attr;
	void *low;
	size_t bytes;

	callsite_stack_low = callsite_stack_top = 0;
	if (pthread_getattr_np(pthread_self(), &attr) != 0)
		return;
	if (pthread_attr_getstack(&attr, &low, &bytes) == 0) {
		callsite_stack_low = (uintptr_t)low;
		callsite_stack_top = (uintptr_t)low + bytes;
	}
	pthread_attr_destroy(&attr);
}

void callsite_note_main_stack(void)
{
	uintptr_t low, top;

	if (main_stack_bounds(callsite_stack_base, &low, &top)) {
		callsite_stack_low = low;
		callsite_stack_top = top;
	} else {
		callsite_note_stack();
	}
}

/* Clears the shared tables keyed by raw addresses, made before the unload that
 * changed the salt to salt (the per-thread caches need nothing: their old
 * entries no longer match). The module table follows the loader's own
 * counters. With the guard set. */
static __attribute__((noinline)) void catch_up(uintptr_t salt)
{
	bool held = lone_lock(&callsite_mutex);

	if (tables_salt != salt) {
		addr_map_clear(&raw_to_site);
		atomic_store_explicit(&seeded_module_count, 0, memory_order_release);
		frame_walk_forget();
		module_table_refresh(&modules);
		tables_salt = salt;
	}
	lone_unlock(&callsite_mutex, held);
}

/* The site of the raw stack ips[0..count), from tc's cache of raw stacks (tc:
 * the calling thread's own caches, or NULL if it has none), the shared map, or
 * resolved anew; *recent: its slot in the cache (which holds it unless the site
 * is unknown), NULL without caches. *first_seen: set if resolved anew. */
static uint32_t site_of_stack(struct thread_caches *tc, void *const *ips, int count, uintptr_t salt,
			      struct recent_stack **recent, bool *first_seen)
{
	uint64_t value, raw = raw_key(ips, count);
	uint32_t site;

	*first_seen = false;
	*recent = tc ? &tc->stacks[raw & tc->stacks_mask] : NULL;
	if (*recent && (*recent)->raw == (raw ^ salt))
		return (*recent)->site;
	bool held = lone_lock(&callsite_mutex);
	if (addr_map_get(&raw_to_site, raw, &value)) {
		site = (uint32_t)value;
	} else {
		site = resolve_site(ips, count);
		addr_map_put(&raw_to_site, raw, site); /* on ENOMEM we just resolve again */
		*first_seen = true;
	}
	lone_unlock(&callsite_mutex, held);
	/* Where not every stack has a site (replay), none is an answer too. */
	if (site == CALLSITE_UNKNOWN && !interner.names_every_stack)
		site = CALLSITE_UNPLANNED;
	if (*recent && site != CALLSITE_UNKNOWN)
		**recent = (struct recent_stack){raw ^ salt, site, NULL};
	return site;
}

/* Caches given back by threads that ended, for threads that start later: at
 * most SPARE_CACHES_MAX (as glibc keeps the stacks of ended threads, and their
 * TLS, for the next ones); past that many, unmapped. Under callsite_mutex. */
#define SPARE_CACHES_MAX 16
static struct thread_caches *spare_caches;
static uint32_t spare_cache_count;

/* Caches for the calling thread, empty: a spare one, or mapped anew; NULL if
 * none can be had. */
static struct thread_caches *take_caches(void)
{
	bool held = lone_lock(&callsite_mutex);
	struct thread_caches *tc = spare_caches;

	if (tc) {
		spare_caches = tc->next_spare;
		spare_cache_count--;
	}
	lone_unlock(&callsite_mutex, held);
	/* Cleared here rather than dropped with madvise when given back: the
	 * faults of a thread's first calls cost more than this (record of a
	 * program that makes 20,000 threads: 0.25 s more system time). Only the
	 * slots of its size were ever written. */
	if (tc) {
		caches_reset(tc);
		return tc;
	}
	tc = mmap(NULL, CACHES_MAP_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		  0);
	if (tc == MAP_FAILED)
		return NULL;
	caches_set_level(tc, 0);
	return tc;
}

/* Keeps tc for a thread to come, or unmaps it. */
static void give_back_caches(struct thread_caches *tc)
{
	bool held = lone_lock(&callsite_mutex);
	if (spare_cache_count < SPARE_CACHES_MAX) {
		tc->next_spare = spare_caches;
		spare_caches = tc;
		spare_cache_count++;
		tc = NULL;
	}
	lone_unlock(&callsite_mutex, held);
	if (tc)
		munmap(tc, CACHES_MAP_BYTES);
}

/* The calling thread's caches, made on first use; NULL if it has none and
 * gets none: it ended, or no memory could be had (then it never tries
 * again: a mapping tried at every call would cost more than the walks). */
static struct thread_caches *own_caches(void)
{
	struct thread_caches *tc = (struct thread_caches *)callsite_caches;

	if (tc != &no_caches)
		return tc;
	if (caches_retired || !caches_key_made)
		return NULL;
	tc = take_caches();
	if (!tc || pthread_setspecific(caches_key, tc) != 0) {
		if (tc)
			give_back_caches(tc);
		caches_retired = true;
		return NULL;
	}
	callsite_caches = &tc->shared;
	return tc;
}

void callsite_prepare_thread(void)
{
	(void)own_caches();
}

/* The thread's end, as its keys' destructors run: what it allocates from now
 * on (other destructors, libc's own clean-up) is walked. The guard keeps a
 * signal handler that allocates off callsite_mutex while this holds it. */
static void retire_caches(void *caches)
{
	guard_enter();
	callsite_caches = &no_caches.shared;
	caches_retired = true;
	give_back_caches(caches);
	guard_leave();
}

/* callsite_capture, past the per-thread cache of origins: the stack, walked or
 * unwound, then its site from the caches of raw stacks or resolved anew. The
 * origin's slot then holds it, and so does this thread's cache of walked
 * stacks, for when its origin's slot holds another. */
static __attribute__((noinline)) uint32_t capture_uncached(struct callsite_origin origin,
							   void ***cookie)
{
	void *ips[CALLSITE_MAX_DEPTH];
	uintptr_t at[CALLSITE_MAX_DEPTH];
	struct recent_stack *recent;
	bool unchecked, first_seen;
	const uintptr_t salt = atomic_load_explicit(&callsite_salt, memory_order_acquire);

	if (salt != tables_salt)
		catch_up(salt);
	int named_none;
	int count = stack_of(origin, ips, at, &unchecked, &named_none);
	struct thread_caches *tc = count > 0 || named_none ? own_caches() : NULL;
	if (count <= 0) {
		/* Remembered as such: its next calls are not walked again. */
		void *no_cookie = NULL;
		if (named_none && tc)
			remember(tc, origin.return_address, origin.frame, ips, at, named_none,
				 CALLSITE_UNPLANNED, &no_cookie);
		return CALLSITE_UNKNOWN;
	}
	uint32_t site = site_of_stack(tc, ips, count, salt, &recent, &first_seen);
	/* A walk that names no site may have gone wrong at a frame whose size
	 * changed: each such stack is compared with an unwind once, when first
	 * seen. The unwind's stack, if another, is the true one. */
	if (site >= CALLSITE_UNPLANNED && unchecked && first_seen) {
		bool agreed;
		count = unwind_stack(count, ips, at, &agreed);
		if (count <= 0)
			return CALLSITE_UNKNOWN;
		if (!agreed)
			site = site_of_stack(tc, ips, count, salt, &recent, &first_seen);
	}
	if (site == CALLSITE_UNKNOWN || !tc)
		return site;
	*cookie = remember(tc, origin.return_address, origin.frame, ips, at, count, site,
			   &recent->cookie);
	return site;
}

void callsite_after_dlclose(void)
{
	/* Most dlcloses only drop a reference: nothing moves, and the caches stay. */
	static _Atomic unsigned long long unloads_seen;
	unsigned long long now = module_unloads();
	unsigned long long seen = atomic_load_explicit(&unloads_seen, memory_order_relaxed);

	/* An odd step: the salt comes back to a value only after 2^64 unloads. */
	if (now != seen &&
	    atomic_compare_exchange_strong_explicit(&unloads_seen, &seen, now, memory_order_relaxed,
						    memory_order_relaxed)) {
		atomic_fetch_add_explicit(&callsite_salt, (uintptr_t)UINT64_C(0x9e3779b97f4a7c15),
					  memory_order_release);
		/* The frame sizes go with the caches (catch_up), the plan's too:
		 * stacks are learned again by unwinding from now on. The caller is
		 * the program's dlclose, which took the loader's lock itself: a
		 * dlopen here adds no order of locks. Not in a sandbox: loading
		 * it opens files, which the sandbox may end the process for. */
		if (callsite_depth && !preload_is_sealed())
			frame_walk_open_unwinder();
	}
}

uint32_t callsite_capture(void ***cookie)
{
	struct callsite_origin origin = take_origin();
	void **unused;
	uint32_t site;

	if (!cookie)
		cookie = &unused;
	/* An empty slot has return address 0, as has a call that was not marked. */
	if (!origin.return_address || (site = callsite_cached(origin.return_address, origin.frame,
							      cookie)) == CALLSITE_UNKNOWN) {
		*cookie = NULL;
		site = capture_uncached(origin, cookie);
	}
	return site == CALLSITE_UNPLANNED ? CALLSITE_UNKNOWN : site;
}

void callsite_modules(const struct plan_module **out_modules, uint32_t *module_count,
		      const char **strings, uint64_t *strings_bytes)
{
	*out_modules = plan_modules;
	*module_count = plan_module_count;
	*strings = plan_strings;
	*strings_bytes = plan_strings_bytes;
}

/* What callsite_frame_sizes gathers. */
struct frame_sizes {
	struct plan_frame_size *sizes;
	uint32_t count, cap;
	bool failed;
};

static void gather_frame_size(uintptr_t ip, uint32_t size, void *ctx)
{
	struct frame_sizes *fs = ctx;
	const struct module *m = module_table_find(&modules, ip);

	/* memplan's own frames are no part of the program's stacks (resolve_site). */
	if (fs->failed || !m || (ip >= callsite_own_start && ip < callsite_own_end))
		return;
	if (fs->count == fs->cap) {
		uint32_t cap = fs->cap ? 2 * fs->cap : 256;
		struct plan_frame_size *grown = realloc(fs->sizes, cap * sizeof(*grown));
		if (!grown) {
			fs->failed = true;
			return;
		}
		fs->sizes = grown;
		fs->cap = cap;
	}
	uint32_t module = plan_module_index(m);
	if (module == UINT32_MAX) {
		fs->failed = true;
		return;
	}
	fs->sizes[fs->count++] = (struct plan_frame_size){ip - m->base, module, size};
}

static int by_module_offset(const void *a, const void *b)
{
	const struct plan_frame_size *x = a, *y = b;

	if (x->module != y->module)
		return x->module < y->module ? -1 : 1;
	return (x->offset > y->offset) - (x->offset < y->offset);
}

int callsite_frame_sizes(struct plan_frame_size **sizes, uint32_t *count, bool *complete)
{
	struct frame_sizes fs = {0};

	*complete = frame_walk_complete();
	module_table_refresh(&modules);
	frame_walk_each_known(gather_frame_size, &fs);
	if (fs.failed) {
		free(fs.sizes);
		return -ENOMEM;
	}
	qsort(fs.sizes, fs.count, sizeof(*fs.sizes), by_module_offset);
	/* A module mapped twice gives one (module, offset) two addresses. */
	uint32_t kept = 0;
	for (uint32_t k = 0; k < fs.count; k++)
		if (!kept || by_module_offset(&fs.sizes[kept - 1], &fs.sizes[k]) != 0)
			fs.sizes[kept++] = fs.sizes[k];
	*sizes = fs.sizes;
	*count = kept;
	return 0;
}

/* The one loaded module with this key, or NULL if none or several. */
static const struct module *loaded_module(uint64_t key)
{
	const struct module *found = NULL;

	for (size_t i = 0; i < modules.count; i++) {
		if (modules.modules[i].key != key)
			continue;
		if (found)
			return NULL;
		found = &modules.modules[i];
	}
	return found;
}

/* Seeds the sizes f[0..n) of module m (loaded), and lists m among the seeded
 * modules if the plan gave all of its sizes (complete) and all were kept.
 * Under the call-site lock. */
static void seed_module(const struct module *m, const struct plan_frame_size *f, uint32_t n,
			bool complete)
{
	uint32_t seeded = atomic_load_explicit(&seeded_module_count, memory_order_relaxed);
	bool all_kept = true;

	for (uint32_t k = 0; k < n; k++) {
		uintptr_t ip = m->base + f[k].offset;
		/* The plan's offsets are checked against the module it names: an
		 * address outside it is some other module's code. */
		if (ip >= m->start && ip < m->end &&
		    !(ip >= callsite_own_start && ip < callsite_own_end))
			all_kept &= frame_walk_seed(ip, f[k].bytes);
		else
			all_kept = false;
	}
	if (complete && all_kept && seeded < SEEDED_MODULES_MAX &&
	    !(m->start < callsite_own_end && callsite_own_start < m->end)) {
		seeded_modules[seeded].start = m->start;
		seeded_modules[seeded].end = m->end;
		atomic_store_explicit(&seeded_module_count, seeded + 1, memory_order_release);
	}
}

/* The sizes of the plan's modules that were not loaded when it was seeded
 * (extension modules a program loads with dlopen), seeded when they appear
 * (seed_late_modules). Copies: the plan's tables are dropped after start-up.
 * Under the call-site lock; late_pending is read without it. */
struct late_module {
	uint64_t key;
	struct plan_frame_size *sizes; /* sorted by offset */
	uint32_t count;
	bool complete, seeded;
};
static struct late_module *late_modules;
static uint32_t late_module_count;

static void drop_late_modules(void)
{
	for (uint32_t i = 0; i < late_module_count; i++)
		free(late_modules[i].sizes);
	free(late_modules);
	late_modules = NULL;
	late_module_count = 0;
	atomic_store_explicit(&late_pending, 0, memory_order_relaxed);
}

static void add_late_module(uint64_t key, const struct plan_frame_size *f, uint32_t n,
			    bool complete)
{
	struct late_module *grown = realloc(late_modules, (late_module_count + 1) * sizeof(*grown));
	struct plan_frame_size *sizes = malloc(n * sizeof(*sizes));

	if (grown)
		late_modules = grown;
	if (!grown || !sizes) {
		free(sizes);
		return;
	}
	memcpy(sizes, f, n * sizeof(*sizes));
	late_modules[late_module_count++] = (struct late_module){key, sizes, n, complete, false};
	atomic_fetch_add_explicit(&late_pending, 1, memory_order_relaxed);
}

/* Whether the late module key has a size (or a mark) for offset. */
static bool late_size_known(uint64_t key, uint64_t offset)
{
	for (uint32_t i = 0; i < late_module_count; i++) {
		const struct late_module *l = &late_modules[i];
		if (l->key != key)
			continue;
		uint32_t lo = 0, hi = l->count;
		while (lo < hi) {
			uint32_t mid = lo + (hi - lo) / 2;
			if (l->sizes[mid].offset < offset)
				lo = mid + 1;
			else
				hi = mid;
		}
		return lo < l->count && l->sizes[lo].offset == offset;
	}
	return false;
}

/* Seeds the late modules loaded since; true if it seeded any. */
static bool seed_late_modules(void)
{
	bool any = false;
	bool held = lone_lock(&callsite_mutex);

	if (module_table_refresh(&modules) == 0) {
		for (uint32_t i = 0; i < late_module_count; i++) {
			struct late_module *l = &late_modules[i];
			const struct module *m = l->seeded ? NULL : loaded_module(l->key);
			if (!m)
				continue;
			frame_walk_reserve(l->count);
			seed_module(m, l->sizes, l->count, l->complete);
			l->seeded = any = true;
			atomic_fetch_sub_explicit(&late_pending, 1, memory_order_relaxed);
		}
	}
	lone_unlock(&callsite_mutex, held);
	return any;
}

/* Whether a walk can go through every frame but the last of every site of im:
 * its size is known (or it varies, and is walked by its frame pointer), in a
 * module loaded now or, for one loaded later, among its late sizes. Under the
 * call-site lock. */
static bool walks_suffice(const struct plan_image *im)
{
	/* Each plan module's loaded one, looked up once: looked up per frame,
	 * this took 233,000 instructions of a perl start-up, 103,000 now. */
	const uint32_t modules_count = im->record.module_count;
	const struct module **loaded =
	    malloc((modules_count ? modules_count : 1) * sizeof(*loaded));
	bool suffice = true;

	if (!loaded)
		return false; /* the unwinder is opened: slower, never wrong */
	for (uint32_t i = 0; i < modules_count; i++)
		loaded[i] = loaded_module(im->modules[i].key);
	for (uint32_t i = 0; suffice && i < im->record.site_count; i++) {
		const struct plan_site *site = &im->sites[i];
		for (uint32_t k = 0; suffice && k + 1 < site->frame_count; k++) {
			const struct plan_frame *f = &im->frames[site->first_frame + k];
			const struct module *m = loaded[f->module];
			suffice = m ? frame_walk_walkable(m->base + f->offset)
				    : late_size_known(im->modules[f->module].key, f->offset);
		}
	}
	free(loaded);
	return suffice;
}

bool callsite_seed_frame_sizes(const struct plan_image *im)
{
	const struct plan_frame_size *f = im->frame_sizes;
	const uint32_t count = im->record.frame_size_count;
	const bool complete = im->record.flags & PLAN_IMAGE_FRAME_SIZES;
	bool held = lone_lock(&callsite_mutex);

	drop_late_modules();
	frame_walk_reserve(count);
	for (uint32_t k = 0, n; k < count; k += n) {
		uint32_t module = f[k].module;
		for (n = 1; k + n < count && f[k + n].module == module; n++)
			;
		const struct module *m = loaded_module(im->modules[module].key);
		if (m)
			seed_module(m, f + k, n, complete);
		else
			add_late_module(im->modules[module].key, f + k, n, complete);
	}
	bool suffice = walks_suffice(im);
	lone_unlock(&callsite_mutex, held);
	return suffice;
}

void callsite_lock(void)
{
	pthread_mutex_lock(&callsite_mutex);
}

void callsite_unlock(void)
{
	pthread_mutex_unlock(&callsite_mutex);
}

void callsite_after_fork_child(void)
{
	pthread_mutex_init(&callsite_mutex, NULL);
}

void callsite_forget_sites(void)
{
	addr_map_clear(&raw_to_site);
	atomic_store_explicit(&seeded_module_count, 0, memory_order_release);
	struct thread_caches *tc = (struct thread_caches *)callsite_caches;
	/* A forked child's caches are its parent's pages, shared until written:
	 * cleared with memset, each of their 13 pages was copied first (the
	 * benchmark's shell loop: 164,432 page faults, 159,607 with the caches
	 * dropped). Dropped, they read as zero, and cost only the pages used
	 * again. tc is a mapping of its own (take_caches). */
	if (tc == &no_caches)
		return;
	if (madvise(tc, CACHES_MAP_BYTES, MADV_DONTNEED) == 0)
		caches_set_level(tc, 0);
	else
		caches_reset(tc);
}

uint64_t callsite_main_module_key(void)
{
	uint64_t key;

	bool held = lone_lock(&callsite_mutex);
	key = module_table_main_key(&modules);
	lone_unlock(&callsite_mutex, held);
	return key;
}
