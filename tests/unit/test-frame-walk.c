/* frame_walk against the unwinder (libgcc's), on stacks of many shapes: recursion of random
 * depth, calls through a table of functions with different frames, frames sized
 * at run time (alloca), and a second thread. Every walk that finishes must give
 * exactly the unwinder's return addresses; frames whose size changes must stop
 * being walked; and most captures must be walked once the sizes are learned. */
#define _GNU_SOURCE
#include <alloca.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "frame_walk.h"
#include "own_stack.h"

extern void *__libc_stack_end;

/* Each function below must stay a frame of its own, at return addresses of its
 * own: gcc would otherwise fold identical ones into one (sized and sized_late)
 * and clone one for a constant argument (sized_late(64)), and the test would
 * no longer see a frame change its size. */
#if defined(__clang__)
#define FRAME __attribute__((noinline))
#else
#define FRAME __attribute__((noipa))
#endif

static __thread uintptr_t stack_top;
static __thread uint64_t seed;
/* volatile: raise() is declared a leaf, yet its handler counts too. */
static __thread volatile int captures, walked, refused;
/* Set while a frame is known to have changed its size under a trusted walk:
 * that one walk may be wrong, the next through it must not be. */
static __thread bool lenient;
/* Set while the stack's only frame sized at run time is the capture's caller,
 * which keeps a frame pointer (alloca): a walk given that frame pointer must
 * then go through it. */
static __thread bool by_frame_pointer;
static __thread int fp_captures, fp_walked;

/* What an allocation shim does: notes its caller's return address and stack
 * pointer, then compares a walk from them with an unwind and teaches the table. */
static FRAME void capture(void)
{
	uintptr_t ra = (uintptr_t)__builtin_return_address(0);
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0) + 2 * sizeof(uintptr_t);
	void *ips[64], *walk[64];
	uintptr_t sps[64], at[64];
	bool outermost;
	int n = frame_walk_unwind(0, 0, ips, sps, 64, &outermost), k = 0;

	/* A stack of fewer frames than asked for ends at a frame with no caller
	 * (_start, or the thread's clone): without it known, no walk would finish. */
	CHECK(n == 64 || outermost);

	while (k < n && (uintptr_t)ips[k] != ra)
		k++;
	/* The shim's frame is where the walk starts: the unwinder must agree. */
	CHECK(k < n && sps[k] == sp);
	int want = n - k;
	uintptr_t unlearned = 0;
	if (by_frame_pointer) {
		/* The shim's prologue saved its caller's frame pointer at its own. */
		uintptr_t fp = *(const uintptr_t *)__builtin_frame_address(0);
		int f = frame_walk(ra, sp, fp, stack_top, walk, at, want, &unlearned);
		fp_captures++;
		if (f >= 0) {
			CHECK(f == want && !memcmp(walk, ips + k, (size_t)f * sizeof(void *)));
			fp_walked++;
		}
	}
	int w = frame_walk(ra, sp, FRAME_WALK_NO_FP, stack_top, walk, at, want, &unlearned);
	captures++;
	if (w >= 0) {
		bool same = w == want && memcmp(walk, ips + k, (size_t)w * sizeof(void *)) == 0;
		/* Each return address lies just below its caller's stack pointer. */
		for (int j = 0; same && j < w; j++)
			CHECK(at[j] == sps[k + j] - sizeof(uintptr_t) &&
			      *(const uintptr_t *)at[j] == (uintptr_t)walk[j]);
		CHECK(same || lenient);
		walked += same;
	} else {
		CHECK(w == FRAME_WALK_LEARNING || w == FRAME_WALK_NEVER);
		refused += w == FRAME_WALK_NEVER;
		/* The frame it could not go past is one of the stack's (replay takes
		 * its module to tell whether any planned stack goes through it). */
		int j = k;
		while (w == FRAME_WALK_LEARNING && j < n && (uintptr_t)ips[j] != unlearned)
			j++;
		CHECK(w != FRAME_WALK_LEARNING || j < n || lenient);
	}
	frame_walk_learn(ips + k, sps + k, want, outermost, false, stack_top);
}

static uint64_t next_random(void)
{
	seed = seed * 6364136223846793005u + 1442695040888963407u;
	return seed >> 33;
}

static FRAME void recurse(int depth)
{
	volatile char pad[24];
	pad[0] = (char)depth;
	if (depth > 0)
		recurse(depth - 1);
	else
		capture();
	pad[1] = pad[0];
}

static FRAME void small_frame(void)
{
	capture();
}

static FRAME void big_frame(void)
{
	volatile char pad[4000];
	pad[0] = 1;
	capture();
	pad[1] = pad[0];
}

static FRAME void through_recursion(void)
{
	recurse((int)(next_random() % 5));
}

static void (*const table[])(void) = {small_frame, big_frame, through_recursion};

static FRAME void dispatch(unsigned i)
{
	table[i % 3]();
}

/* A frame sized at run time. */
static FRAME void sized(size_t bytes)
{
	volatile char *p = alloca(bytes);
	p[0] = 1;
	by_frame_pointer = true;
	capture();
	by_frame_pointer = false;
	p[bytes - 1] = p[0];
}

/* The same, for the frame that changes its size late (main). */
static FRAME void sized_late(size_t bytes)
{
	volatile char *p = alloca(bytes);
	p[0] = 1;
	capture();
	p[bytes - 1] = p[0];
}

static void on_signal(int sig)
{
	(void)sig;
	capture();
}

static void shapes(void)
{
	for (int round = 0; round < 3000; round++) {
		switch (next_random() % 3) {
		case 0:
			recurse((int)(next_random() % 20));
			break;
		case 1:
			dispatch((unsigned)next_random());
			break;
		default:
			sized(16 + next_random() % 4096);
			break;
		}
	}
}

static void *thread_main(void *arg)
{
	uintptr_t low;

	own_stack(&low, &stack_top);
	seed = (uintptr_t)arg;
	shapes();
	CHECK(walked > captures / 2);
	return NULL;
}

/* The sizes frame_walk_each_known reports, as a plan keeps them. */
static struct {
	uintptr_t ip;
	uint32_t size;
} known[1 << 14];
static uint32_t known_count, known_varying;

static void keep(uintptr_t ip, uint32_t size, void *ctx)
{
	(void)ctx;
	CHECK(known_count < sizeof(known) / sizeof(known[0]));
	known[known_count].ip = ip;
	known[known_count++].size = size;
	known_varying += size == FRAME_WALK_VARIES;
}

static FRAME void two_captures(void)
{
	recurse(3);
	dispatch(0);
}

/* What replay does with a plan's sizes: stacks walked once their sizes are
 * trusted are not walked right after the table forgot them; seeded with what
 * the table had learned, it walks them at once. Each phase captures through
 * the one call below, so that they all meet the same return addresses. */
static FRAME void check_seeding(void)
{
	enum { TRUSTED = FRAME_WALK_CHECKS, FORGOTTEN, SEEDED };

	/* volatile: a loop peeled into one copy per phase would call from as many
	 * places. */
	for (volatile int phase = 0; phase <= SEEDED; phase++) {
		if (phase == FORGOTTEN) {
			/* Every size learned so far is known: none lost for room. */
			CHECK(frame_walk_complete());
			frame_walk_each_known(keep, NULL);
			CHECK(known_count > 0);
			CHECK(known_varying > 0); /* sized, sized_late, the signal frame */
			frame_walk_forget();
			CHECK(!frame_walk_complete());
		}
		if (phase == SEEDED) {
			frame_walk_forget();
			frame_walk_reserve(known_count);
			for (uint32_t k = 0; k < known_count; k++)
				CHECK(frame_walk_seed(known[k].ip, known[k].size));
		}
		int walked_before = walked;
		two_captures();
		if (phase == TRUSTED)
			CHECK(walked == walked_before + 2);
		if (phase == FORGOTTEN)
			CHECK(walked == walked_before);
		if (phase == SEEDED)
			CHECK(walked == walked_before + 2);
	}
	/* Marked as varying, the run-time sized frame is refused from the start. */
	int refused_before = refused;
	sized(100);
	CHECK(refused == refused_before + 1);
}

int main(void)
{
	pthread_t thread;

	CHECK(frame_walk_init() == 0);
	/* No unwind before the unwinder is opened. */
	void *first_ips[4];
	uintptr_t first_sps[4];
	bool outermost;
	CHECK(frame_walk_unwind(0, 0, first_ips, first_sps, 4, &outermost) == 0);
	CHECK(frame_walk_open_unwinder() == 0);
	CHECK(frame_walk_unwind(0, 0, first_ips, first_sps, 4, &outermost) == 4);
	stack_top = (uintptr_t)__libc_stack_end;
	seed = 1;
	shapes();
	/* Learned after a few captures each, most stacks are walked; those through
	 * the run-time sized frame are refused, never wrong. */
	CHECK(walked > captures / 2);
	CHECK(refused > 0);
	/* Those through the frame sized at run time are walked by its frame
	 * pointer, once the frames past it are learned. */
	CHECK(fp_walked > fp_captures / 2);

	CHECK(pthread_create(&thread, NULL, thread_main, (void *)7) == 0);
	CHECK(pthread_join(thread, NULL) == 0);

	/* A frame that kept one size long enough to be trusted, then changed: the
	 * walk that meets the change may be wrong (callsite.c cross-checks walks
	 * for this), but once it has been unwound the frame is never walked again. */
	for (int i = 0; i < 10; i++)
		sized_late(64);
	lenient = true;
	sized_late(3000);
	lenient = false;
	int refused_before = refused;
	for (int i = 0; i < 10; i++)
		sized_late(64);
	CHECK(refused == refused_before + 10);

	/* A signal frame is no call: walks through it are refused from the first
	 * unwind on, not unwound again and again to learn it. The handler's own
	 * frame, before it, is learned like any other first (unoptimised, the
	 * handler keeps a frame of its own): FRAME_WALK_CHECKS unwinds. */
	CHECK(signal(SIGUSR1, on_signal) != SIG_ERR);
	for (int i = 0; i < FRAME_WALK_CHECKS; i++)
		raise(SIGUSR1);
	refused_before = refused;
	for (int i = 0; i < 10; i++)
		raise(SIGUSR1);
	CHECK(refused == refused_before + 10);

	check_seeding();
	printf("%d captures, %d walked, %d refused; %u sizes known, %u varying; "
	       "%d of %d through a frame sized at run time walked by its frame pointer\n",
	       captures, walked, refused, known_count, known_varying, fp_walked, fp_captures);
	return 0;
}
