/* Walking the stack from learned frame sizes (x86-64), so that capturing a call
 * site costs a few loads instead of an unwind.
 *
 * Unwinding finds each caller from the unwind tables, which is what an unwinder
 * spends its time on. But at a given return address the frame of the function
 * it returns into has, in compiled code, one size (unless that function sizes
 * its frame at run time: alloca, realignment). Once the size is known, the
 * caller's return address is one load: it lies just below the caller's stack
 * pointer, which is this frame's stack pointer plus the size.
 *
 * The sizes are learned from the unwinder's walks (frame_walk_unwind and
 * frame_walk_learn): the
 * difference between the stack pointers of consecutive frames, accepted only if
 * the next return address is found where that size puts it. A size is trusted
 * once FRAME_WALK_CHECKS walks agreed on it; one walk that disagrees, or a frame
 * that is no plain call (a signal frame), marks the return address as varying:
 * a recording's walks through it go to the unwinder, replay's go by its frame
 * pointer (frame_walk). The outermost frame (no caller) is learned like a size.
 *
 * A plan carries the sizes its recording learned (struct plan_frame_size), and
 * replay starts from them, trusted (frame_walk_seed): it walks a stack it has
 * never unwound, and libgcc's unwinder, with the unwind tables it reads, is
 * left to the checks of walks that name no site (callsite.c) and to frames
 * the recording never saw; a replay whose plan gives every size it needs does
 * not even load it (frame_walk_open_unwinder).
 *
 * A wrong size can only give wrong frames, never a fault: every load is a word
 * between the walk's first stack pointer and base, each frame above the one
 * before, and the caller starts walks only from a frame on the thread's own
 * stack, which is mapped from there up to base. Readers take no lock; learning happens
 * under the caller's lock. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#define FRAME_WALK_CHECKS 4

/* Sizes as frame_walk_seed and frame_walk_each_known pass them, besides a
 * frame's bytes: */
#define FRAME_WALK_OUTERMOST UINT32_MAX	   /* no caller */
#define FRAME_WALK_VARIES    (UINT32_MAX - 1) /* walked by frame pointer, or unwound */

/* frame_walk's fp when frames sized at run time are not to be walked. */
#define FRAME_WALK_NO_FP UINTPTR_MAX

/* What frame_walk returns when it cannot finish: */
#define FRAME_WALK_LEARNING (-1) /* a frame not learned yet: unwind and learn */
#define FRAME_WALK_NEVER    (-2) /* a frame that cannot be walked: just unwind */

/* Reserves the table of sizes. Returns 0 or a negative errno; without it every
 * walk returns FRAME_WALK_NEVER. */
int frame_walk_init(void);

/* Opens libgcc's unwinder, which frame_walk_unwind needs. Returns 0, or
 * -ENOENT if it is not there. Not from an allocation: dlopen takes the
 * dynamic loader's lock, which a thread inside a dlopen may hold while it
 * waits for one the allocating thread holds. Call at start-up, with the
 * caller's guard set (dlopen's own allocations go to libc). */
int frame_walk_open_unwinder(void);

/* The return addresses of up to max frames, from the one that returns to ra with
 * stack pointer sp (the caller's, once ra is returned to), into ips, and where
 * each lies on the stack into at (the word just below its caller's stack
 * pointer). base is the top of the thread's stack. fp: the frame pointer
 * register as the caller of the first frame left it, or FRAME_WALK_NO_FP. A
 * frame whose size varies is then walked as one that keeps a frame pointer (as
 * code that calls alloca must): its caller's stack pointer is its frame
 * pointer + 16, and its caller's frame pointer lies at it. Its frame pointer
 * is fp, or, if a frame since took the register for itself, the copy that
 * frame saved (the word of its frame that points where the word above is a
 * return address the table knows). Both are guesses: a wrong one gives wrong
 * frames, within [sp, base), as a wrong size does. Without fp, such a frame is
 * not walked. Returns how many (fewer than max only at the outermost frame),
 * or FRAME_WALK_LEARNING (with *unlearned set to the return address whose
 * size is not known: ips and at then hold the frames up to it, the first to
 * hold it being its own, since the walk stops at it) or FRAME_WALK_NEVER.
 * Lock-free. */
int frame_walk(uintptr_t ra, uintptr_t sp, uintptr_t fp, uintptr_t base, void **ips, uintptr_t *at,
	       int max, uintptr_t *unlearned);

/* Whether return_address lies in the unwinder's own code. libgcc's unwinder
 * calls malloc while it holds a lock that it takes again to unwind (sorting
 * the unwind tables that a JIT registered with __register_frame): a stack
 * unwound from such an allocation would wait on itself. Those few allocations
 * are never unwound (stack_of). */
bool frame_walk_from_unwinder(uintptr_t return_address);

/* Unwinds the calling thread with libgcc's unwinder (_Unwind_Backtrace): skips the
 * frames whose return addresses lie in [skip_start, skip_end) before the first
 * kept one, keeps up to max return addresses in ips and the frames' stack
 * pointers in sps, and sets *outermost if the last kept frame has no caller.
 * Returns how many: 0 if the unwinder is not open (frame_walk_open_unwinder).
 * Thread-safe. */
int frame_walk_unwind(uintptr_t skip_start, uintptr_t skip_end, void **ips, uintptr_t *sps, int max,
		      bool *outermost);

/* How many times frame_walk_unwind has run in this process: each an unwind
 * that a walk on learned sizes could not spare. */
uint64_t frame_walk_unwinds(void);

/* Counts unwinds from zero again: a forked child's are its own. */
void frame_walk_unwinds_reset(void);

/* Forgets every learned size: the code at some return address may have changed
 * (a module unloaded, another mapped in its place). A walk that runs meanwhile
 * sees each slot learned or empty, and in between at worst a wrong size: wrong
 * frames, never a fault (see above). Call under the learner's lock. */
void frame_walk_forget(void);

/* Makes room for count more sizes at once, rather than doubling the table on
 * the way. Call under the learner's lock. */
void frame_walk_reserve(uint32_t count);

/* Takes size (bytes, or FRAME_WALK_OUTERMOST or FRAME_WALK_VARIES) as trusted
 * for return address ip, unless ip is known already. Whatever it is told, walks
 * stay sound (see above): a wrong size only gives wrong frames. Returns whether
 * ip is now known (false: no room). Call under the learner's lock. */
bool frame_walk_seed(uintptr_t ip, uint32_t size);

/* Whether a replay's walk goes through the frame that returns to ip: its size
 * is trusted, or it varies (walked by its frame pointer, frame_walk).
 * Lock-free. */
bool frame_walk_walkable(uintptr_t ip);

/* Whether every size that walks learned is still known (or marked varying):
 * none was left out for want of room, and none forgotten. A recording that
 * ends so lists, for every frame of every stack it saw but the last, its size
 * or its mark. Call under the learner's lock. */
bool frame_walk_complete(void);

/* Calls fn for each return address whose size some walk learned (and none
 * contradicted), or that is marked varying, with the size as frame_walk_seed
 * takes it. Not only trusted sizes: the rarer a stack, the fewer unwinds it
 * had, and those are the ones a seeded table spares most. Call under the
 * learner's lock. */
void frame_walk_each_known(void (*fn)(uintptr_t ip, uint32_t size, void *ctx), void *ctx);

/* Learns the frame sizes that a frame_walk_unwind of the calling thread found,
 * before the frames it saw return. cut_short: the unwind ended before the depth
 * it was asked for at a frame that is not the outermost (no unwind table says
 * where its caller is), which is then marked varying. base: as for frame_walk
 * (0: learns nothing). One learner at a time: call under the caller's lock. */
void frame_walk_learn(void *const *ips, const uintptr_t *sps, int n, bool outermost,
		      bool cut_short, uintptr_t base);
