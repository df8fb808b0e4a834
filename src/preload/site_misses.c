/* Misses per call site, see site_misses.h. */
#define _GNU_SOURCE
#include "site_misses.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/mman.h>

/* A site's counts: its total first, whose first miss also lists the site, so
 * that the report reads the rows of the sites that missed and no other (the
 * rest of the mapping is never touched). */
struct row {
	_Atomic uint64_t total;
	_Atomic uint64_t by_reason[SITE_MISS_REASONS];
};

struct table {
	uint32_t site_count;
	_Atomic uint32_t listed; /* sites in missed, in the order of their first miss */
	size_t bytes;
	struct row *rows;	  /* site_count of them */
	_Atomic uint32_t *missed; /* site_count of them */
};

static struct table *_Atomic table;

static struct table *table_make(uint32_t site_count)
{
	size_t rows = (size_t)site_count * sizeof(struct row);
	size_t bytes = sizeof(struct table) + rows + (size_t)site_count * sizeof(uint32_t);
	struct table *t =
	    mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct table *expected = NULL;

	if (t == MAP_FAILED)
		return NULL;
	/* Zero, as a fresh mapping is: only the header is written. */
	t->site_count = site_count;
	t->bytes = bytes;
	t->rows = (struct row *)(t + 1);
	t->missed = (_Atomic uint32_t *)((char *)t->rows + rows);
	if (!atomic_compare_exchange_strong(&table, &expected, t)) {
		munmap(t, bytes); /* another thread's came first */
		return expected;
	}
	return t;
}

void site_misses_note(uint32_t site, uint32_t site_count, unsigned reason)
{
	struct table *t = atomic_load_explicit(&table, memory_order_acquire);

	if (!t && !(t = table_make(site_count)))
		return;
	if (site >= t->site_count || reason >= SITE_MISS_REASONS)
		return;
	struct row *r = &t->rows[site];
	atomic_fetch_add_explicit(&r->by_reason[reason], 1, memory_order_relaxed);
	if (atomic_fetch_add_explicit(&r->total, 1, memory_order_relaxed) == 0) {
		uint32_t at = atomic_fetch_add_explicit(&t->listed, 1, memory_order_relaxed);
		/* Each site is listed once, by the thread whose add found 0. */
		atomic_store_explicit(&t->missed[at], site, memory_order_release);
	}
}

unsigned site_misses_top(struct site_misses_row top[SITE_MISSES_TOP])
{
	struct table *t = atomic_load_explicit(&table, memory_order_acquire);
	unsigned n = 0;

	if (!t)
		return 0;
	uint32_t listed = atomic_load_explicit(&t->listed, memory_order_acquire);
	if (listed > t->site_count)
		listed = t->site_count;
	for (uint32_t i = 0; i < listed; i++) {
		/* A site being listed right now may still read 0 (site 0): its
		 * row's total then says whether it missed. */
		uint32_t site = atomic_load_explicit(&t->missed[i], memory_order_acquire);
		const struct row *r = &t->rows[site];
		uint64_t total = atomic_load_explicit(&r->total, memory_order_relaxed);
		bool seen = false;
		for (unsigned k = 0; k < n; k++)
			seen |= top[k].site == site;
		if (!total || seen)
			continue;
		/* Insertion into the few kept, most first. */
		unsigned at = n < SITE_MISSES_TOP ? n++ : SITE_MISSES_TOP;
		while (at > 0 && top[at - 1].total < total) {
			if (at < SITE_MISSES_TOP)
				top[at] = top[at - 1];
			at--;
		}
		if (at == SITE_MISSES_TOP)
			continue;
		top[at].site = site;
		top[at].total = total;
		for (unsigned k = 0; k < SITE_MISS_REASONS; k++)
			top[at].by_reason[k] =
			    atomic_load_explicit(&r->by_reason[k], memory_order_relaxed);
	}
	return n;
}

void site_misses_reset(void)
{
	struct table *t = atomic_exchange(&table, NULL);

	if (t)
		munmap(t, t->bytes);
}
