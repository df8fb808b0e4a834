/* The allocating helper of the call-site identity programs (same_depth and
 * split_paths): a function of its own, whose call of malloc is the origin all
 * their stacks share. It writes the block, adds what it read back to
 * helper_sum (which the programs print, so that nothing is optimised away),
 * and frees it. */
#pragma once

#include <stdlib.h>
#include <string.h>

static unsigned long helper_sum;

static __attribute__((noinline)) void helper(size_t n)
{
	char *p = malloc(n);

	if (!p)
		exit(1);
	memset(p, (int)n, n);
	helper_sum += (unsigned char)p[n - 1] + n;
	free(p);
}
