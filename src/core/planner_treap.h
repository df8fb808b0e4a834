/* A small ordered set for the planner's free-gap bookkeeping: a treap keyed by a
 * pair of 64-bit integers, with nodes in one growable array addressed by index so
 * that millions of insertions cost no per-node malloc. Internal to the planner. */
#pragma once

#include <stdint.h>

#define TREAP_NIL UINT32_MAX

struct treap_node {
	uint64_t key_a, key_b;
	uint32_t left, right, prio;
};

struct treap {
	struct treap_node *nodes;
	uint32_t root, free_head, used, cap;
	uint32_t rng;
};

/* Initialises an empty set. Does not allocate. */
void treap_init(struct treap *t, uint32_t seed);
void treap_destroy(struct treap *t);

/* Inserts (a, b); keys must be unique. Returns 0 or -ENOMEM. May allocate. */
int treap_insert(struct treap *t, uint64_t a, uint64_t b);
/* Removes (a, b) if present. */
void treap_erase(struct treap *t, uint64_t a, uint64_t b);
/* The smallest key >= (a, b); returns TREAP_NIL if none. */
uint32_t treap_lower_bound(const struct treap *t, uint64_t a, uint64_t b);
