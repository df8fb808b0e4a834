/* Stack walks from learned frame sizes, see frame_walk.h. */
#define _GNU_SOURCE
#include "frame_walk.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/mman.h>

#include <unwind.h>

#include "plan_file.h"
#include "prefault.h"

/* Open addressing by return address, insert only: a return address keeps its
 * slot as long as its table lives. The table starts small and doubles when half
 * full, so that it costs memory as the program's code on the stack does (a
 * table of 2^16 slots from the start, touched at random, took 680 KiB of a
 * small program's resident set). A new table is published with release and the
 * old one stays mapped: a reader still walking through it reads sound, if
 * stale, slots. The tables a process ever had add up to less than twice its
 * last. */
#define SLOT_BITS_MIN 10
#define SLOT_BITS_MAX 20
#define PROBES_MAX    32
/* state: how many walks agreed, up to FRAME_WALK_CHECKS; or VARIES. */
#define VARIES UINT32_MAX
/* size of the outermost frame: there is no caller to go on to. */
#define OUTERMOST FRAME_WALK_OUTERMOST
/* What learn is told of a frame that cannot be walked: it is marked VARIES. */
#define UNWALKABLE FRAME_WALK_VARIES
/* Frames bigger than this are not learned (a walk across stacks, say). */
#define FRAME_BYTES_MAX (UINT64_C(1) << 24)
static_assert(FRAME_WALK_OUTERMOST == PLAN_FRAME_OUTERMOST &&
		  FRAME_WALK_VARIES == PLAN_FRAME_VARIES && FRAME_BYTES_MAX == PLAN_FRAME_BYTES_MAX,
	      "a plan's frame sizes are frame_walk's");

struct frame_slot {
	_Atomic uint64_t ip; /* 0: free. Set last, with release: size is then in place. */
	uint32_t size;	     /* bytes from this frame's stack pointer to the caller's */
	_Atomic uint32_t state;
};

struct frame_table {
	uint32_t bits;
	uint32_t used; /* slots taken; under the learner's lock */
	struct frame_slot slots[];
};

static struct frame_table *_Atomic table;
static _Atomic uint64_t unwinds;
/* Set once a size some walk learned was not kept, or was forgotten
 * (frame_walk_complete). Under the learner's lock. */
static bool sizes_lost;

static size_t table_bytes(uint32_t bits)
{
	return sizeof(struct frame_table) + ((size_t)1 << bits) * sizeof(struct frame_slot);
}

/* A new empty table of 2^bits slots, or NULL. */
static struct frame_table *table_new(uint32_t bits)
{
	struct frame_table *t = mmap(NULL, table_bytes(bits), PROT_READ | PROT_WRITE,
				     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (t == MAP_FAILED)
		return NULL;
	t->bits = bits;
	return t;
}

/* libgcc's unwinder, opened only when the process may need it
 * (frame_walk_open_unwinder): loading libgcc_s costs a replay that never
 * unwinds about 100 KiB of resident set (its relocations, and its code around
 * its initialiser). */
struct unwinder {
	_Unwind_Reason_Code (*backtrace)(_Unwind_Trace_Fn, void *);
	_Unwind_Ptr (*get_ip_info)(struct _Unwind_Context *, int *);
	_Unwind_Word (*get_cfa)(struct _Unwind_Context *);
	uintptr_t start, end; /* its module */
};
static struct unwinder unwinder; /* written before unwinder_open is set */
static _Atomic bool unwinder_open;

int frame_walk_init(void)
{
	struct frame_table *t = table_new(SLOT_BITS_MIN);

	if (!t)
		return -errno;
	atomic_store_explicit(&table, t, memory_order_release);
	return 0;
}

int frame_walk_open_unwinder(void)
{
	if (atomic_load_explicit(&unwinder_open, memory_order_acquire))
		return 0;
	void *lib = dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_LOCAL);
	struct unwinder u = {0};
	struct dl_find_object where;

	if (lib) {
		*(void **)&u.backtrace = dlsym(lib, "_Unwind_Backtrace");
		*(void **)&u.get_ip_info = dlsym(lib, "_Unwind_GetIPInfo");
		*(void **)&u.get_cfa = dlsym(lib, "_Unwind_GetCFA");
	}
	if (!u.backtrace || !u.get_ip_info || !u.get_cfa ||
	    _dl_find_object((void *)(uintptr_t)u.backtrace, &where) != 0)
		return -ENOENT;
	u.start = (uintptr_t)where.dlfo_map_start;
	u.end = (uintptr_t)where.dlfo_map_end;
	unwinder = u;
	atomic_store_explicit(&unwinder_open, true, memory_order_release);
	return 0;
}

static uint32_t home_of(const struct frame_table *t, uint64_t ip)
{
	return (uint32_t)((ip * UINT64_C(0x9e3779b97f4a7c15)) >> (64 - t->bits));
}

/* The slot of ip in t, or NULL. */
static const struct frame_slot *find(const struct frame_table *t, uint64_t ip)
{
	const uint32_t mask = (UINT32_C(1) << t->bits) - 1;
	uint32_t i = home_of(t, ip);

	for (int probe = 0; probe < PROBES_MAX; probe++, i = (i + 1) & mask) {
		uint64_t at = atomic_load_explicit(&t->slots[i].ip, memory_order_acquire);
		if (at == ip)
			return &t->slots[i];
		if (!at)
			return NULL;
	}
	return NULL;
}

/* Whether fp can be the frame pointer of a frame whose stack pointer (at the
 * call it made) is sp: within [sp, base - 16], aligned, and the word above the
 * caller's frame pointer it points to is a return address the table knows. */
__attribute__((no_sanitize("address"))) static bool plausible_frame_pointer(
    const struct frame_table *t, uintptr_t fp, uintptr_t sp, uintptr_t base)
{
	return fp >= sp && fp <= base - 2 * sizeof(uintptr_t) && !(fp & (sizeof(uintptr_t) - 1)) &&
	       find(t, *(const uintptr_t *)(fp + sizeof(uintptr_t)));
}

/* The frame pointer of a frame sized at run time whose stack pointer is sp: fp,
 * if plausible; else the copy of it that the first frame below to take the
 * register for itself saved (a prologue pushes it near the top of the frame):
 * the first plausible word down from sp to below, where the walk began. 0 if
 * neither. */
__attribute__((no_sanitize("address"))) static uintptr_t frame_pointer(
    const struct frame_table *t, uintptr_t fp, uintptr_t below, uintptr_t sp, uintptr_t base)
{
	if (plausible_frame_pointer(t, fp, sp, base))
		return fp;
	for (uintptr_t w = sp; w > below;) {
		w -= sizeof(uintptr_t);
		uintptr_t saved = *(const uintptr_t *)w;
		if (plausible_frame_pointer(t, saved, sp, base))
			return saved;
	}
	return 0;
}

/* It reads other functions' frames, which AddressSanitizer would not expect. */
__attribute__((no_sanitize("address"))) int frame_walk(uintptr_t ra, uintptr_t sp, uintptr_t fp,
						       uintptr_t base, void **ips, uintptr_t *at,
						       int max, uintptr_t *unlearned)
{
	const struct frame_table *t = atomic_load_explicit(&table, memory_order_acquire);

	if (!t || !base || sp >= base)
		return FRAME_WALK_NEVER;
	/* ra must be what the call left just below the caller's stack pointer. */
	if (*(const uintptr_t *)(sp - sizeof(uintptr_t)) != ra)
		return FRAME_WALK_NEVER;
	const uintptr_t below = sp;
	for (int n = 0;;) {
		at[n] = sp - sizeof(uintptr_t);
		ips[n++] = (void *)ra;
		if (n == max)
			return n;
		const struct frame_slot *s = find(t, ra);
		if (!s) {
			*unlearned = ra;
			return FRAME_WALK_LEARNING;
		}
		uint32_t state = atomic_load_explicit(&s->state, memory_order_relaxed);
		uintptr_t caller_sp;
		if (state == VARIES) {
			/* A frame sized at run time (alloca) is addressed from its
			 * frame pointer, which its prologue set 16 bytes below its
			 * caller's stack pointer, after saving the caller's there. */
			fp = fp != FRAME_WALK_NO_FP ? frame_pointer(t, fp, below, sp, base) : 0;
			if (!fp)
				return FRAME_WALK_NEVER;
			caller_sp = fp + 2 * sizeof(uintptr_t);
			fp = *(const uintptr_t *)fp;
		} else if (state < FRAME_WALK_CHECKS) {
			*unlearned = ra;
			return FRAME_WALK_LEARNING;
		} else if (s->size == OUTERMOST) {
			return n;
		} else {
			caller_sp = sp + s->size;
		}
		/* The load below stays inside [sp, base): no fault, whatever the size. */
		if (caller_sp > base || caller_sp <= sp)
			return FRAME_WALK_NEVER;
		ra = *(const uintptr_t *)(caller_sp - sizeof(uintptr_t));
		sp = caller_sp;
	}
}

bool frame_walk_walkable(uintptr_t ip)
{
	const struct frame_table *t = atomic_load_explicit(&table, memory_order_acquire);
	const struct frame_slot *s = t ? find(t, ip) : NULL;

	/* VARIES is above FRAME_WALK_CHECKS. */
	return s && atomic_load_explicit(&s->state, memory_order_relaxed) >= FRAME_WALK_CHECKS;
}

void frame_walk_forget(void)
{
	struct frame_table *t = atomic_load_explicit(&table, memory_order_relaxed);

	if (!t)
		return;
	/* Private anonymous pages given back read as zeros (free slots), but only
	 * whole pages can be, and the slots start just past the header: the slots
	 * on the pages at either end are freed one by one. A slot that straddles
	 * a page edge may be seen half cleared, its size 0: a walk stops there. */
	struct frame_slot *slots = t->slots;
	const size_t n = (size_t)1 << t->bits;
	const uintptr_t page = 4096, start = (uintptr_t)slots, end = (uintptr_t)(slots + n);
	uintptr_t whole_start = (start + page - 1) & ~(page - 1), whole_end = end & ~(page - 1);
	if (whole_end <= whole_start ||
	    madvise((void *)whole_start, whole_end - whole_start, MADV_DONTNEED) != 0)
		whole_start = whole_end = 0;
	for (size_t i = 0; i < n; i++) {
		uintptr_t at = (uintptr_t)&slots[i];
		if (at >= whole_start && at + sizeof(slots[i]) <= whole_end)
			continue;
		atomic_store_explicit(&slots[i].ip, 0, memory_order_relaxed);
	}
	t->used = 0;
	sizes_lost = true;
}

static bool insert(struct frame_table *t, uint64_t ip, uint32_t size, uint32_t state);

/* Replaces t by a table of 2^bits slots (more than t's): a copy of every slot
 * in a new one, then published. The old one is left mapped for readers still
 * in it. Under the learner's lock. */
static void enlarge(struct frame_table *t, uint32_t bits)
{
	struct frame_table *bigger = table_new(bits);

	if (!bigger) {
		sizes_lost = true; /* it fills up: the rest of the frames are unwound */
		return;
	}
	for (uint32_t i = 0; i < (UINT32_C(1) << t->bits); i++) {
		const struct frame_slot *s = &t->slots[i];
		uint64_t ip = atomic_load_explicit(&s->ip, memory_order_relaxed);
		if (ip && !insert(bigger, ip, s->size,
				  atomic_load_explicit(&s->state, memory_order_relaxed)))
			sizes_lost = true;
	}
	atomic_store_explicit(&table, bigger, memory_order_release);
}

static void grow(struct frame_table *t)
{
	if (t->bits < SLOT_BITS_MAX)
		enlarge(t, t->bits + 1);
}

/* Puts a slot for ip with size and state in t (not there yet), if a free slot
 * is near enough its home. Returns whether it did. */
static bool insert(struct frame_table *t, uint64_t ip, uint32_t size, uint32_t state)
{
	const uint32_t mask = (UINT32_C(1) << t->bits) - 1;
	uint32_t i = home_of(t, ip);

	for (int probe = 0; probe < PROBES_MAX; probe++, i = (i + 1) & mask) {
		struct frame_slot *s = &t->slots[i];
		if (atomic_load_explicit(&s->ip, memory_order_relaxed))
			continue;
		s->size = size;
		atomic_store_explicit(&s->state, state, memory_order_relaxed);
		atomic_store_explicit(&s->ip, ip, memory_order_release);
		t->used++;
		return true;
	}
	return false;
}

void frame_walk_reserve(uint32_t count)
{
	struct frame_table *t = atomic_load_explicit(&table, memory_order_relaxed);

	if (!t)
		return;
	uint32_t bits = t->bits;
	uint64_t want = 2 * ((uint64_t)t->used + count);
	while (bits < SLOT_BITS_MAX && want > (UINT64_C(1) << bits))
		bits++;
	bool fresh = !t->used; /* a forked child's table is its parent's pages */
	if (bits > t->bits) {
		enlarge(t, bits);
		t = atomic_load_explicit(&table, memory_order_relaxed);
		fresh = true;
	}
	/* With four sizes or more a page to come, hashed evenly, nearly every
	 * page is written, after a lookup read it. */
	const size_t bytes = table_bytes(t->bits);
	if (fresh && count >= 4 * (bytes / 4096))
		prefault_write(t, bytes);
}

bool frame_walk_seed(uintptr_t ip, uint32_t size)
{
	struct frame_table *t = atomic_load_explicit(&table, memory_order_relaxed);

	if (!t || !ip)
		return false;
	if (find(t, ip))
		return true;
	if (2 * (t->used + 1) > (UINT32_C(1) << t->bits)) {
		grow(t);
		t = atomic_load_explicit(&table, memory_order_relaxed);
	}
	return insert(t, ip, size, size == UNWALKABLE ? VARIES : FRAME_WALK_CHECKS);
}

bool frame_walk_complete(void)
{
	return atomic_load_explicit(&table, memory_order_relaxed) && !sizes_lost;
}

void frame_walk_each_known(void (*fn)(uintptr_t ip, uint32_t size, void *ctx), void *ctx)
{
	const struct frame_table *t = atomic_load_explicit(&table, memory_order_relaxed);

	for (uint32_t i = 0; t && i < (UINT32_C(1) << t->bits); i++) {
		const struct frame_slot *s = &t->slots[i];
		uint64_t ip = atomic_load_explicit(&s->ip, memory_order_relaxed);
		uint32_t state = atomic_load_explicit(&s->state, memory_order_relaxed);
		if (ip && state == VARIES)
			fn(ip, UNWALKABLE, ctx);
		else if (ip && state >= 1)
			fn(ip, s->size, ctx);
	}
}

/* Counts one walk's view of ip's frame size. Under the learner's lock. */
static void learn(uint64_t ip, uint32_t size)
{
	struct frame_table *t = atomic_load_explicit(&table, memory_order_relaxed);

	if (!t || !ip)
		return;
	if (2 * (t->used + 1) > (UINT32_C(1) << t->bits)) {
		grow(t);
		t = atomic_load_explicit(&table, memory_order_relaxed);
	}
	const uint32_t mask = (UINT32_C(1) << t->bits) - 1;
	uint32_t i = home_of(t, ip);
	for (int probe = 0; probe < PROBES_MAX; probe++, i = (i + 1) & mask) {
		struct frame_slot *s = &t->slots[i];
		uint64_t at = atomic_load_explicit(&s->ip, memory_order_relaxed);
		if (!at) {
			if (!insert(t, ip, size, size == UNWALKABLE ? VARIES : 1))
				sizes_lost = true;
			return;
		}
		if (at != ip)
			continue;
		uint32_t state = atomic_load_explicit(&s->state, memory_order_relaxed);
		if (state == VARIES)
			return;
		if (s->size != size || size == UNWALKABLE)
			atomic_store_explicit(&s->state, VARIES, memory_order_relaxed);
		else if (state < FRAME_WALK_CHECKS)
			atomic_store_explicit(&s->state, state + 1, memory_order_relaxed);
		return;
	}
	/* The neighbourhood is full: ip stays unlearned and is always unwound. */
	sizes_lost = true;
}

/* What frame_walk_unwind's visits fill. */
struct unwind_walk {
	uintptr_t skip_start, skip_end;
	void **ips;
	uintptr_t *sps;
	int max, n;
	bool ended; /* the last frame visited has no caller */
};

/* One frame of the unwind: its return address, and its stack pointer at the
 * call it made, which is the CFA of the frame it called. */
static _Unwind_Reason_Code visit(struct _Unwind_Context *context, void *arg)
{
	struct unwind_walk *walk = arg;
	int before_insn;
	uintptr_t ip = unwinder.get_ip_info(context, &before_insn);

	/* Past the outermost frame (whose return address its unwind table marks
	 * undefined, as _start's), libgcc visits once more with no address. */
	if (!ip) {
		walk->ended = true;
		return _URC_NORMAL_STOP;
	}
	if (!walk->n && ip >= walk->skip_start && ip < walk->skip_end)
		return _URC_NO_REASON;
	walk->ips[walk->n] = (void *)ip;
	walk->sps[walk->n] = unwinder.get_cfa(context);
	return ++walk->n < walk->max ? _URC_NO_REASON : _URC_NORMAL_STOP;
}

uint64_t frame_walk_unwinds(void)
{
	return atomic_load_explicit(&unwinds, memory_order_relaxed);
}

void frame_walk_unwinds_reset(void)
{
	atomic_store_explicit(&unwinds, 0, memory_order_relaxed);
}

bool frame_walk_from_unwinder(uintptr_t return_address)
{
	if (!atomic_load_explicit(&unwinder_open, memory_order_acquire))
		return false;
	return return_address >= unwinder.start && return_address < unwinder.end;
}

int frame_walk_unwind(uintptr_t skip_start, uintptr_t skip_end, void **ips, uintptr_t *sps, int max,
		      bool *outermost)
{
	struct unwind_walk walk = {skip_start, skip_end, ips, sps, max, 0, false};

	*outermost = false;
	if (max <= 0 || !atomic_load_explicit(&unwinder_open, memory_order_acquire))
		return 0;
	/* Shared, but an unwind takes microseconds: the count costs nothing beside. */
	atomic_fetch_add_explicit(&unwinds, 1, memory_order_relaxed);
	/* libgcc's unwinder finds each frame's unwind table with _dl_find_object:
	 * no lock, no system call. libunwind 1.6 (Debian's, built without its
	 * per-thread cache) set the signal mask at every step, 9,300 system calls
	 * for the 2,900 steps of a replayed `perl -e 1`. */
	_Unwind_Reason_Code end = unwinder.backtrace(visit, &walk);
	/* The end of the stack before max frames: the last one has no caller. */
	*outermost = walk.n > 0 && walk.n < max && (walk.ended || end == _URC_END_OF_STACK);
	return walk.n;
}

__attribute__((no_sanitize("address"))) void frame_walk_learn(void *const *ips,
							      const uintptr_t *sps, int n,
							      bool outermost, bool cut_short,
							      uintptr_t base)
{
	if (!base)
		return;
	/* A frame's size is where its caller's stack pointer is; accepted only if the
	 * caller's return address lies just below it, as a call leaves it. */
	for (int k = 0; k + 1 < n; k++) {
		uintptr_t caller_sp = sps[k + 1];
		bool a_call =
		    caller_sp > sps[k] && caller_sp <= base &&
		    caller_sp - sps[k] < FRAME_BYTES_MAX &&
		    *(const uintptr_t *)(caller_sp - sizeof(uintptr_t)) == (uintptr_t)ips[k + 1];
		/* Not a plain call (a signal frame, another stack): never walked, so it
		 * is not unwound again and again to learn what cannot be learned. */
		learn((uintptr_t)ips[k], a_call ? (uint32_t)(caller_sp - sps[k]) : UNWALKABLE);
	}
	if (n > 0 && outermost)
		learn((uintptr_t)ips[n - 1], OUTERMOST);
	/* The unwinder found no caller of the last frame, which is not the
	 * outermost (code without an unwind table): no walk can go past it. */
	else if (n > 0 && cut_short)
		learn((uintptr_t)ips[n - 1], UNWALKABLE);
}
