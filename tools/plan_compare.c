/* Comparing two plans, see plan_compare.h. */
#define _GNU_SOURCE
#include "plan_compare.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash_table.h"

/* The sites of one image with one identity (chain and lines): group i of a
 * side has identity ids[i]. */
struct group {
	uint64_t peak_bytes, allocs;
	bool paired;
	size_t other; /* the paired group of the other side */
};

struct group_index {
	char *key; /* chain and lines */
	size_t group;
	UT_hash_handle hh;
};

struct side {
	struct site_identity *ids;
	struct group *groups;
	size_t count;
	struct group_index *index;
};

static void figures_add(struct plan_figures *sum, const struct plan_figures *f)
{
	sum->requested_peak_bytes += f->requested_peak_bytes;
	sum->lower_bound_bytes += f->lower_bound_bytes;
	sum->arena_bytes += f->arena_bytes;
	sum->allocations += f->allocations;
}

static void identities_free(struct site_identity *ids, size_t count)
{
	for (size_t i = 0; ids && i < count; i++)
		site_identity_free(&ids[i]);
	free(ids);
}

static void side_free(struct side *side)
{
	struct group_index *g, *next;

	HASH_ITER(hh, side->index, g, next)
	{
		HASH_DEL(side->index, g);
		free(g->key);
		free(g);
	}
	identities_free(side->ids, side->count);
	free(side->groups);
	memset(side, 0, sizeof(*side));
}

/* The key of an identity: its chain, then its lines. */
static char *group_key(const struct site_identity *id)
{
	size_t chain = strlen(id->chain), cap = chain + 12 * (size_t)id->count + 2;
	char *key = malloc(cap);

	if (!key)
		return NULL;
	memcpy(key, id->chain, chain);
	size_t at = chain;
	key[at++] = '\x1d';
	for (uint32_t k = 0; k < id->count; k++)
		at += (size_t)snprintf(key + at, cap - at, "%u,", id->functions[k].line);
	key[at] = '\0';
	return key;
}

/* Groups the sites of im by identity. Returns 0 or -ENOMEM. */
static int side_build(const struct plan_image *im, uint32_t depth, struct symbolizer *sym,
		      struct side *side)
{
	uint32_t n = im->record.site_count;

	side->ids = calloc(n ? n : 1, sizeof(*side->ids));
	side->groups = calloc(n ? n : 1, sizeof(*side->groups));
	if (!side->ids || !side->groups)
		return -ENOMEM;
	for (uint32_t s = 0; s < n; s++) {
		struct site_identity id;
		struct group_index *g;
		if (site_identity_build(im, s, depth, sym, &id) < 0)
			return -ENOMEM;
		char *key = group_key(&id);
		if (!key) {
			site_identity_free(&id);
			return -ENOMEM;
		}
		HASH_FIND_STR(side->index, key, g);
		if (g) {
			free(key);
			site_identity_free(&id);
		} else {
			g = malloc(sizeof(*g));
			if (!g) {
				free(key);
				site_identity_free(&id);
				return -ENOMEM;
			}
			g->key = key;
			g->group = side->count++;
			side->ids[g->group] = id;
			HASH_ADD_KEYPTR(hh, side->index, g->key, strlen(g->key), g);
		}
		side->groups[g->group].peak_bytes += im->sites[s].peak_bytes;
		side->groups[g->group].allocs += im->sites[s].alloc_count;
	}
	return 0;
}

static int by_chain_then_lines(const void *pa, const void *pb)
{
	const struct site_identity *a = *(struct site_identity *const *)pa;
	const struct site_identity *b = *(struct site_identity *const *)pb;
	int c = strcmp(a->chain, b->chain);

	return c ? c : site_identity_compare_lines(a, b);
}

/* The identities of the groups of side not paired yet, sorted by chain then
 * lines, into a new array (*count of them), or NULL on ENOMEM. */
static struct site_identity **unpaired(struct side *side, size_t *count)
{
	struct site_identity **left = calloc(side->count ? side->count : 1, sizeof(*left));

	*count = 0;
	for (size_t i = 0; left && i < side->count; i++)
		if (!side->groups[i].paired)
			left[(*count)++] = &side->ids[i];
	if (left)
		qsort(left, *count, sizeof(*left), by_chain_then_lines);
	return left;
}

static void pair(struct side *base, size_t b, struct side *head, size_t h)
{
	base->groups[b].paired = head->groups[h].paired = true;
	base->groups[b].other = h;
	head->groups[h].other = b;
}

/* Pairs groups of equal chain and lines, then those left of equal chain in the
 * order of their lines. Returns 0 or -ENOMEM. */
static int pair_groups(struct side *base, struct side *head)
{
	for (size_t h = 0; h < head->count; h++) {
		struct group_index *g;
		char *key = group_key(&head->ids[h]);
		if (!key)
			return -ENOMEM;
		HASH_FIND_STR(base->index, key, g);
		free(key);
		if (g && !base->groups[g->group].paired)
			pair(base, g->group, head, h);
	}
	size_t nb, nh, i = 0, j = 0;
	struct site_identity **bl = unpaired(base, &nb), **hl = unpaired(head, &nh);
	if (!bl || !hl) {
		free(bl);
		free(hl);
		return -ENOMEM;
	}
	while (i < nb && j < nh) {
		int c = strcmp(bl[i]->chain, hl[j]->chain);
		if (c == 0)
			pair(base, (size_t)(bl[i++] - base->ids), head,
			     (size_t)(hl[j++] - head->ids));
		else if (c < 0)
			i++;
		else
			j++;
	}
	free(bl);
	free(hl);
	return 0;
}

static uint64_t magnitude(int64_t v)
{
	return v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
}

static int by_change(const void *pa, const void *pb)
{
	const struct site_change *a = pa, *b = pb;
	uint64_t ab = magnitude(site_change_bytes(a)), bb = magnitude(site_change_bytes(b));
	uint64_t aa = magnitude(site_change_allocs(a)), ba = magnitude(site_change_allocs(b));

	if (ab != bb)
		return ab > bb ? -1 : 1;
	if (aa != ba)
		return aa > ba ? -1 : 1;
	return strcmp(a->id->chain, b->id->chain);
}

/* The site changes of a pair of images into c. Returns 0 or -ENOMEM. */
static int compare_sites(struct image_change *c, struct symbolizer *sym)
{
	uint32_t depth = c->base.record.depth < c->head.record.depth ? c->base.record.depth
								     : c->head.record.depth;
	struct side base = {0}, head = {0};
	int r = -ENOMEM;

	if (side_build(&c->base, depth, sym, &base) < 0 ||
	    side_build(&c->head, depth, sym, &head) < 0 || pair_groups(&base, &head) < 0)
		goto out;
	c->sites = calloc(base.count + head.count + 1, sizeof(*c->sites));
	if (!c->sites)
		goto out;
	for (size_t h = 0; h < head.count; h++) {
		const struct group *g = &head.groups[h];
		const struct group *o = g->paired ? &base.groups[g->other] : NULL;
		struct site_change s = {
		    .id = &head.ids[h],
		    .in_base = o != NULL,
		    .in_head = true,
		    .base_peak_bytes = o ? o->peak_bytes : 0,
		    .head_peak_bytes = g->peak_bytes,
		    .base_allocs = o ? o->allocs : 0,
		    .head_allocs = g->allocs,
		};
		c->new_sites += !o;
		c->paired_sites += o != NULL;
		if (site_change_bytes(&s) || site_change_allocs(&s) || !o)
			c->sites[c->site_count++] = s;
	}
	for (size_t b = 0; b < base.count; b++) {
		const struct group *g = &base.groups[b];
		if (g->paired)
			continue;
		c->sites[c->site_count++] = (struct site_change){
		    .id = &base.ids[b],
		    .in_base = true,
		    .base_peak_bytes = g->peak_bytes,
		    .base_allocs = g->allocs,
		};
		c->gone_sites++;
	}
	qsort(c->sites, c->site_count, sizeof(*c->sites), by_change);
	/* The site changes point at the identities: they go with them. */
	c->base_ids = base.ids;
	c->base_id_count = base.count;
	c->head_ids = head.ids;
	c->head_id_count = head.count;
	base.ids = head.ids = NULL;
	r = 0;
out:
	side_free(&base);
	side_free(&head);
	return r;
}

int plan_compare(const void *base, const void *head, struct symbolizer *sym,
		 struct plan_comparison *out)
{
	struct image_pair *pairs;
	size_t count;

	memset(out, 0, sizeof(*out));
	if (image_match(base, head, &pairs, &count) < 0)
		return -ENOMEM;
	out->images = calloc(count ? count : 1, sizeof(*out->images));
	if (!out->images) {
		free(pairs);
		return -ENOMEM;
	}
	for (size_t i = 0; i < count; i++) {
		struct image_change *c = &out->images[out->image_count++];
		c->pair = pairs[i];
		if (c->pair.base >= 0) {
			plan_file_image(base, (uint32_t)c->pair.base, &c->base);
			c->base_figures = plan_summary_figures(&c->base);
			figures_add(&out->base_total, &c->base_figures);
		}
		if (c->pair.head >= 0) {
			plan_file_image(head, (uint32_t)c->pair.head, &c->head);
			c->head_figures = plan_summary_figures(&c->head);
			figures_add(&out->head_total, &c->head_figures);
		}
		if (c->pair.base >= 0 && c->pair.head >= 0) {
			out->paired++;
			if (compare_sites(c, sym) < 0) {
				free(pairs);
				plan_comparison_free(out);
				return -ENOMEM;
			}
		}
	}
	free(pairs);
	return 0;
}

void plan_comparison_free(struct plan_comparison *c)
{
	for (size_t i = 0; c->images && i < c->image_count; i++) {
		struct image_change *ic = &c->images[i];
		free(ic->sites);
		identities_free(ic->base_ids, ic->base_id_count);
		identities_free(ic->head_ids, ic->head_id_count);
	}
	free(c->images);
	memset(c, 0, sizeof(*c));
}
