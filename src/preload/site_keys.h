/* The plan image's call sites by key, for replay to name a stack it has not
 * seen before (replay.c, intern_site).
 *
 * Open addressing over the sites' keys, built in one pass at start-up: a
 * sorted array, searched by bsearch, cost a qsort of every site in every
 * replayed process (a perl start-up's 420 sites: 180,000 instructions, of the
 * 2.3 million memplan added to it). 16 bytes a site, as the sorted array took: the keys by
 * site, and a table of twice as many 4-byte slots. A site's key is a hash of
 * its frames, but a plan may be hostile: slots are found by the key mixed with
 * a salt of the process's own (AT_RANDOM), so no plan can make its keys collide
 * on purpose. */
#pragma once

#include <stdint.h>

#include "plan_file.h"

#define SITE_KEYS_NONE UINT32_MAX

struct site_keys {
	uint64_t *keys;	 /* by site index */
	uint32_t *slots; /* a site's index + 1; 0: empty */
	uint32_t count;	 /* sites */
	uint32_t mask;	 /* slots - 1, a power of two less one */
	uint64_t salt;
};

/* Indexes sites[0..n); where sites share a key, the first of them is found.
 * Returns 0, or -ENOMEM with t left empty. Allocates from libc. */
int site_keys_build(struct site_keys *t, const struct plan_site *sites, uint32_t n);

/* The index of the site with this key, or SITE_KEYS_NONE. Does not allocate. */
uint32_t site_keys_find(const struct site_keys *t, uint64_t key);

/* The key of site index site; 0 if there is no such site. */
uint64_t site_keys_key(const struct site_keys *t, uint32_t site);

/* Frees t's tables and leaves it empty. */
void site_keys_free(struct site_keys *t);
