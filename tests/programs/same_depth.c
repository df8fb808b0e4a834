/* One allocating helper reached from several callers at the same stack depth:
 * directly from path_a and path_b, and through one shared middle function
 * from path_c and path_d, so that the stacks differ only in their second
 * frame, or only in their third. Each path allocates ROUNDS blocks of its own
 * size, path after path, then all of them again: a call site is the whole
 * stack, so the plan has four sites of 2 * ROUNDS allocations each, however
 * alike their first frames are. Prints a checksum. */
#include <stdio.h>

#include "alloc_helper.h"

#define ROUNDS 32


static __attribute__((noinline)) void middle(size_t n)
{
	helper(n);
	asm volatile("" ::: "memory"); /* no tail call: middle stays on the stack */
}

static __attribute__((noinline)) void path_a(void)
{
	for (int i = 0; i < ROUNDS; i++)
		helper(100);
	asm volatile("" ::: "memory");
}

static __attribute__((noinline)) void path_b(void)
{
	for (int i = 0; i < ROUNDS; i++)
		helper(200);
	asm volatile("" ::: "memory");
}

static __attribute__((noinline)) void path_c(void)
{
	for (int i = 0; i < ROUNDS; i++)
		middle(300);
	asm volatile("" ::: "memory");
}

static __attribute__((noinline)) void path_d(void)
{
	for (int i = 0; i < ROUNDS; i++)
		middle(400);
	asm volatile("" ::: "memory");
}

int main(void)
{
	for (int twice = 0; twice < 2; twice++) {
		path_a();
		path_b();
		path_c();
		path_d();
	}
	printf("%lu\n", helper_sum);
	return 0;
}
