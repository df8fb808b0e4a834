/* Treap over index-addressed nodes (see planner_treap.h). Split/merge form: each
 * operation is a couple of short recursions of expected depth O(log n). */
#include "planner_treap.h"

#include <errno.h>
#include <stdlib.h>

void treap_init(struct treap *t, uint32_t seed)
{
	t->nodes = NULL;
	t->root = TREAP_NIL;
	t->free_head = TREAP_NIL;
	t->used = t->cap = 0;
	t->rng = seed ? seed : 0x9e3779b9u;
}

void treap_destroy(struct treap *t)
{
	free(t->nodes);
	t->nodes = NULL;
}

static int key_less(const struct treap_node *x, uint64_t a, uint64_t b)
{
	return x->key_a < a || (x->key_a == a && x->key_b < b);
}

/* Splits u into keys < (a, b) and keys >= (a, b). */
static void split(struct treap *t, uint32_t u, uint64_t a, uint64_t b, uint32_t *l, uint32_t *r)
{
	if (u == TREAP_NIL) {
		*l = *r = TREAP_NIL;
		return;
	}
	struct treap_node *x = &t->nodes[u];
	if (key_less(x, a, b)) {
		split(t, x->right, a, b, &t->nodes[u].right, r);
		*l = u;
	} else {
		split(t, x->left, a, b, l, &t->nodes[u].left);
		*r = u;
	}
}

static uint32_t merge(struct treap *t, uint32_t l, uint32_t r)
{
	if (l == TREAP_NIL)
		return r;
	if (r == TREAP_NIL)
		return l;
	if (t->nodes[l].prio > t->nodes[r].prio) {
		t->nodes[l].right = merge(t, t->nodes[l].right, r);
		return l;
	}
	t->nodes[r].left = merge(t, l, t->nodes[r].left);
	return r;
}

int treap_insert(struct treap *t, uint64_t a, uint64_t b)
{
	uint32_t u;

	if (t->free_head != TREAP_NIL) {
		u = t->free_head;
		t->free_head = t->nodes[u].left;
	} else {
		if (t->used == t->cap) {
			uint32_t cap = t->cap ? t->cap * 2 : 64;
			struct treap_node *nn = realloc(t->nodes, (size_t)cap * sizeof(*nn));
			if (!nn)
				return -ENOMEM;
			t->nodes = nn;
			t->cap = cap;
		}
		u = t->used++;
	}
	/* xorshift32: priorities only need to look random, and a fixed seed keeps runs
	 * reproducible. */
	t->rng ^= t->rng << 13;
	t->rng ^= t->rng >> 17;
	t->rng ^= t->rng << 5;
	t->nodes[u] = (struct treap_node){a, b, TREAP_NIL, TREAP_NIL, t->rng};

	uint32_t l, r;
	split(t, t->root, a, b, &l, &r);
	t->root = merge(t, merge(t, l, u), r);
	return 0;
}

void treap_erase(struct treap *t, uint64_t a, uint64_t b)
{
	uint32_t *link = &t->root;

	while (*link != TREAP_NIL) {
		struct treap_node *x = &t->nodes[*link];
		if (x->key_a == a && x->key_b == b) {
			uint32_t u = *link;
			*link = merge(t, x->left, x->right);
			t->nodes[u].left = t->free_head;
			t->free_head = u;
			return;
		}
		link = key_less(x, a, b) ? &x->right : &x->left;
	}
}

uint32_t treap_lower_bound(const struct treap *t, uint64_t a, uint64_t b)
{
	uint32_t u = t->root, best = TREAP_NIL;

	while (u != TREAP_NIL) {
		const struct treap_node *x = &t->nodes[u];
		if (key_less(x, a, b)) {
			u = x->right;
		} else {
			best = u;
			u = x->left;
		}
	}
	return best;
}
