/* Minimal assertions for the unit tests: a failed check prints where and why, and
 * the test exits 1. Exit 77 means skipped (meson's convention). */
#pragma once

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);   \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

#define CHECK_EQ_U64(a, b)                                                                         \
	do {                                                                                       \
		unsigned long long check_a_ = (a), check_b_ = (b);                                 \
		if (check_a_ != check_b_) {                                                        \
			fprintf(stderr, "%s:%d: %s == %s failed: %llu != %llu\n", __FILE__,        \
				__LINE__, #a, #b, check_a_, check_b_);                             \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

/* A fixed-seed xorshift generator, so every run of a test sees the same inputs.
 * *state must start non-zero. */
static inline uint64_t check_random(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
}
