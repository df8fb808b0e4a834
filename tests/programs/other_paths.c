/* Call sites a replay's plan may not have: the helper (alloc_helper.h) reached
 * through one of two middle functions, each passed the caller it goes on to,
 * so that which stacks a run makes depends on its first argument:
 *   fg: through_a calls via_f, through_b calls via_g;
 *   gf: the other way round: every frame is one that fg ran through, at the
 *       same return addresses, but the stacks are not fg's;
 *   new: through a function fg never runs, whose frame a plan of fg knows
 *       nothing of;
 *   new-big: as new, but the last round runs fg's paths for blocks larger
 *       than fg made there (misses at sites the plan has).
 * usage: other_paths fg|gf|new|new-big ROUNDS; prints a checksum. */
#include <stdio.h>
#include <string.h>

#include "alloc_helper.h"

typedef void (*step)(size_t n);

static __attribute__((noinline)) void via_f(size_t n)
{
	helper(n);
	__asm__ volatile("" ::: "memory"); /* no tail call: a frame of its own */
}

static __attribute__((noinline)) void via_g(size_t n)
{
	helper(n + 8);
	__asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void through_a(step next, size_t n)
{
	next(n);
	__asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void through_b(step next, size_t n)
{
	next(n + 16);
	__asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void through_new(size_t n)
{
	helper(n + 24);
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: other_paths fg|gf|new|new-big ROUNDS\n");
		return 2;
	}
	long rounds = atol(argv[2]);
	const char *mode = argv[1];
	for (long i = 0; i < rounds; i++) {
		size_t n = 32 + (size_t)(i % 4) * 8;
		if (!strcmp(mode, "new-big") && i == rounds - 1) {
			mode = "fg"; /* by fg's own calls: the stacks it recorded */
			n = 80;
		}
		if (!strcmp(mode, "fg")) {
			through_a(via_f, n);
			through_b(via_g, n);
		} else if (!strcmp(mode, "gf")) {
			through_a(via_g, n);
			through_b(via_f, n);
		} else {
			through_new(n);
		}
	}
	printf("%lu\n", helper_sum);
	return 0;
}
