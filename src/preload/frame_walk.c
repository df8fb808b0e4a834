/* Stack walks from learned frame sizes, see frame_walk.h. */
#define _GNU_SOURCE
#include "frame_walk.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/mman.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

/* Open addressing by return address, insert only: a return address keeps its
 * slot for the life of the process. 2^16 slots of 16 bytes, mapped on first use
 * of each page. */
#define SLOT_BITS  16
#define SLOTS	   (1u << SLOT_BITS)
#define PROBES_MAX 32
/* state: how many walks agreed, up to FRAME_WALK_CHECKS; or VARIES. */
#define VARIES UINT32_MAX
/* size of the outermost frame: there is no caller to go on to. */
#define OUTERMOST UINT32_MAX
/* What learn is told of a frame that cannot be walked: it is marked VARIES. */
#define UNWALKABLE (UINT32_MAX - 1)
/* Frames bigger than this are not learned (a walk across stacks, say). */
#define FRAME_BYTES_MAX (UINT64_C(1) << 24)

struct frame_slot {
	_Atomic uint64_t ip; /* 0: free. Set last, with release: size is then in place. */
	uint32_t size;	     /* bytes from this frame's stack pointer to the caller's */
	_Atomic uint32_t state;
};

static struct frame_slot *slots;

int frame_walk_init(void)
{
	void *p = mmap(NULL, SLOTS * sizeof(*slots), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		return -errno;
	slots = p;
	return 0;
}

static uint32_t home_of(uint64_t ip)
{
	return (uint32_t)((ip * UINT64_C(0x9e3779b97f4a7c15)) >> (64 - SLOT_BITS));
}

/* The slot of ip, or NULL. */
static const struct frame_slot *find(uint64_t ip)
{
	uint32_t i = home_of(ip);

	for (int probe = 0; probe < PROBES_MAX; probe++, i = (i + 1) & (SLOTS - 1)) {
		uint64_t at = atomic_load_explicit(&slots[i].ip, memory_order_acquire);
		if (at == ip)
			return &slots[i];
		if (!at)
			return NULL;
	}
	return NULL;
}

/* It reads other functions' frames, which AddressSanitizer would not expect. */
__attribute__((no_sanitize("address"))) int frame_walk(uintptr_t ra, uintptr_t sp, uintptr_t base,
						       void **ips, int max)
{
	if (!slots || !base || sp >= base)
		return FRAME_WALK_NEVER;
	/* ra must be what the call left just below the caller's stack pointer. */
	if (*(const uintptr_t *)(sp - sizeof(uintptr_t)) != ra)
		return FRAME_WALK_NEVER;
	for (int n = 0;;) {
		ips[n++] = (void *)ra;
		if (n == max)
			return n;
		const struct frame_slot *s = find(ra);
		if (!s)
			return FRAME_WALK_LEARNING;
		uint32_t state = atomic_load_explicit(&s->state, memory_order_relaxed);
		if (state == VARIES)
			return FRAME_WALK_NEVER;
		if (state < FRAME_WALK_CHECKS)
			return FRAME_WALK_LEARNING;
		if (s->size == OUTERMOST)
			return n;
		uintptr_t caller_sp = sp + s->size;
		/* The load below stays inside [sp, base): no fault, whatever the size. */
		if (caller_sp > base || caller_sp <= sp)
			return FRAME_WALK_NEVER;
		ra = *(const uintptr_t *)(caller_sp - sizeof(uintptr_t));
		sp = caller_sp;
	}
}

void frame_walk_forget(void)
{
	/* Private anonymous pages: given back, they read as zeros (free slots). */
	if (slots)
		madvise(slots, SLOTS * sizeof(*slots), MADV_DONTNEED);
}

/* Counts one walk's view of ip's frame size. Under the learner's lock. */
static void learn(uint64_t ip, uint32_t size)
{
	uint32_t i = home_of(ip);

	if (!slots || !ip)
		return;
	for (int probe = 0; probe < PROBES_MAX; probe++, i = (i + 1) & (SLOTS - 1)) {
		struct frame_slot *s = &slots[i];
		uint64_t at = atomic_load_explicit(&s->ip, memory_order_relaxed);
		if (!at) {
			s->size = size;
			atomic_store_explicit(&s->state, size == UNWALKABLE ? VARIES : 1,
					      memory_order_relaxed);
			atomic_store_explicit(&s->ip, ip, memory_order_release);
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
}

int frame_walk_unwind(uintptr_t skip_start, uintptr_t skip_end, void **ips, uintptr_t *sps, int max,
		      bool *outermost)
{
	unw_context_t context;
	unw_cursor_t cursor;
	int n = 0, step = 1;

	*outermost = false;
	if (max <= 0 || unw_getcontext(&context) < 0 || unw_init_local(&cursor, &context) < 0)
		return 0;
	for (bool skipping = true; n < max; step = unw_step(&cursor)) {
		unw_word_t ip, sp;
		if (step <= 0 || unw_get_reg(&cursor, UNW_REG_IP, &ip) < 0 ||
		    unw_get_reg(&cursor, UNW_REG_SP, &sp) < 0 || !ip)
			break;
		if (skipping && ip >= skip_start && ip < skip_end)
			continue;
		skipping = false;
		ips[n] = (void *)ip;
		sps[n] = sp;
		n++;
	}
	/* unw_step returns 0 on the last frame: it has no caller. */
	*outermost = n > 0 && n < max && step == 0;
	return n;
}

__attribute__((no_sanitize("address"))) void
frame_walk_learn(void *const *ips, const uintptr_t *sps, int n, bool outermost, uintptr_t base)
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
	if (outermost)
		learn((uintptr_t)ips[n - 1], OUTERMOST);
}
