/* One allocating helper reached through two functions of the same frame, each
 * called through one pointer from two callers, so that the stacks of the
 * helper's call of malloc differ in their second frame, their third, or both:
 * three call sites, of one size each. The first stacks (through via_one, from
 * caller_a, then from caller_b) differ first in their third frame; the last
 * ones, from caller_b through via_one or via_two in turn, have the same third
 * frame and differ in their second. A cache of stacks that told an origin's
 * stacks apart by the frame where its first two differed alone would credit
 * the calls through via_two to the site through via_one. Prints a checksum. */
#include <stdio.h>

#include "alloc_helper.h"

#define ROUNDS 64

#if defined(__clang__)
#define APART __attribute__((noinline))
#else
#define APART __attribute__((noipa)) /* neither folded into one nor cloned */
#endif

static APART void via_one(size_t n)
{
	helper(n);
	asm volatile("" ::: "memory"); /* no tail call: it stays on the stack */
}

static APART void via_two(size_t n)
{
	helper(n);
	asm volatile("nop" ::: "memory");
}

/* volatile: a call through it is one call instruction, whichever it calls. */
static void (*volatile via)(size_t);

static APART void caller_a(size_t n)
{
	via(n);
	asm volatile("" ::: "memory");
}

static APART void caller_b(size_t n)
{
	via(n);
	asm volatile("nop" ::: "memory");
}

/* One call of main's for all: its return address is a frame of every stack. */
static APART void call(void (*caller)(size_t), void (*through)(size_t), size_t n)
{
	via = through;
	caller(n);
	asm volatile("" ::: "memory");
}

int main(void)
{
	for (int i = 0; i < 4 * ROUNDS; i++) {
		int second_half = i >= 2 * ROUNDS, odd = i % 2;
		void (*caller)(size_t) = odd || second_half ? caller_b : caller_a;
		void (*through)(size_t) = odd && second_half ? via_two : via_one;
		call(caller, through, odd && second_half ? 300 : odd || second_half ? 200 : 100);
	}
	printf("%lu\n", helper_sum);
	return 0;
}
