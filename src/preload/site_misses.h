/* Which call sites of the image went to libc, and why: the statistics line's
 * missed_sites, so that a replay served at 85% names the call sites that fell
 * off the plan (a loop whose pools were too few, a string longer than any
 * recorded), not only the reasons summed over the image.
 *
 * Counted on the miss path only, which goes on to libc's malloc anyway: one
 * relaxed atomic add or two. The table is one anonymous mapping of a row per
 * site, made at the image's first miss: a plan of a hundred thousand sites
 * costs only the pages of the sites that miss. */
#pragma once

#include <stdint.h>

/* Reasons are the caller's numbers, below SITE_MISS_REASONS. */
#define SITE_MISS_REASONS 12u

/* The sites reported per image. */
#define SITE_MISSES_TOP 5u

struct site_misses_row {
	uint32_t site;
	uint64_t total;
	uint64_t by_reason[SITE_MISS_REASONS];
};

/* Counts a miss of site (of site_count in the image) for reason. Thread-safe,
 * lock-free; does not allocate but for the table's mapping at the image's
 * first miss (none if it cannot be mapped: the miss goes uncounted here). */
void site_misses_note(uint32_t site, uint32_t site_count, unsigned reason);

/* Fills top with the sites that missed most, most first; returns how many
 * (at most SITE_MISSES_TOP). Threads still missing may be counted or not.
 * Does not allocate (it runs at exit, maybe in a signal handler). */
unsigned site_misses_top(struct site_misses_row top[SITE_MISSES_TOP]);

/* Forgets every count: a forked child's statistics start from zero, and an
 * image of its own has other sites. With one thread. */
void site_misses_reset(void);
