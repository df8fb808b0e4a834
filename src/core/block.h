/* A block is one allocation as the planner sees it: a size, an alignment and a
 * half-open lifetime [t_start, t_end) on a logical clock. Two blocks conflict only
 * if their lifetimes intersect; a block that ends at t and one that starts at t may
 * share bytes. A zero-size block conflicts with nothing. The planner fills in
 * offset_bytes; nothing else in the struct is changed by anyone but its owner. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* t_end of a block that is never freed (it escapes the recording). */
#define BLOCK_T_INFINITY UINT64_MAX

struct block {
	uint64_t size_bytes;
	uint64_t t_start;
	uint64_t t_end;	       /* exclusive; BLOCK_T_INFINITY if never freed */
	uint64_t offset_bytes; /* output of the planner */
	uint64_t align_bytes;  /* a power of two, at least 1 */
};

/* True if the two blocks are alive at a common moment and both have bytes. */
static inline bool block_lifetimes_overlap(const struct block *a, const struct block *b)
{
	return a->size_bytes && b->size_bytes && a->t_start < b->t_end && b->t_start < a->t_end;
}
