/* Misses per call site (src/preload/site_misses.c): the sites that missed most
 * come out most first, at most SITE_MISSES_TOP, each with its misses by reason;
 * a site counted out of range, or a reason past the table, is left out; a reset
 * forgets everything and the next image counts afresh. Then four threads
 * count at once, each site's first miss racing between them: every miss is
 * counted once, and every site is listed once. */
#include <pthread.h>
#include <stdint.h>

#include "check.h"
#include "site_misses.h"

#define SITES	  1000
#define NTHREADS  4
#define PER_SITE  500 /* misses of each hot site per thread */
#define HOT_SITES 8

static void *count_misses(void *arg)
{
	const unsigned t = (unsigned)(uintptr_t)arg;

	/* Every thread misses at the hot sites (site h: h + 1 rounds of
	 * PER_SITE), in another order, so that their first misses race. */
	for (unsigned round = 0; round < HOT_SITES; round++)
		for (unsigned i = 0; i < PER_SITE; i++)
			for (unsigned h = round; h < HOT_SITES; h++) {
				unsigned site = (h + t * 3) % HOT_SITES * 100;
				site_misses_note(site, SITES, (i + t) % 2 ? 3 : 8);
			}
	return NULL;
}

int main(void)
{
	struct site_misses_row top[SITE_MISSES_TOP];

	CHECK_EQ_U64(site_misses_top(top), 0);
	/* Site s misses s times, reason 3 for the first half of them, 8 after. */
	for (uint32_t s = 1; s <= 20; s++)
		for (uint32_t i = 0; i < s; i++)
			site_misses_note(s * 7, SITES, i < s / 2 ? 3 : 8);
	site_misses_note(SITES, SITES, 3);	       /* no such site */
	site_misses_note(5, SITES, SITE_MISS_REASONS); /* no such reason */
	CHECK_EQ_U64(site_misses_top(top), SITE_MISSES_TOP);
	for (unsigned k = 0; k < SITE_MISSES_TOP; k++) {
		const uint32_t s = 20 - k;
		CHECK_EQ_U64(top[k].site, s * 7);
		CHECK_EQ_U64(top[k].total, s);
		CHECK_EQ_U64(top[k].by_reason[3], s / 2);
		CHECK_EQ_U64(top[k].by_reason[8], s - s / 2);
		CHECK_EQ_U64(top[k].by_reason[0], 0);
	}
	site_misses_reset();
	CHECK_EQ_U64(site_misses_top(top), 0);
	site_misses_note(0, 1, 2);
	CHECK_EQ_U64(site_misses_top(top), 1);
	CHECK_EQ_U64(top[0].site, 0);
	CHECK_EQ_U64(top[0].total, 1);
	site_misses_note(1, 1, 2); /* past the new image's one site */
	CHECK_EQ_U64(site_misses_top(top), 1);
	site_misses_reset();

	pthread_t threads[NTHREADS];
	for (unsigned t = 0; t < NTHREADS; t++)
		CHECK(pthread_create(&threads[t], NULL, count_misses, (void *)(uintptr_t)t) == 0);
	for (unsigned t = 0; t < NTHREADS; t++)
		CHECK(pthread_join(threads[t], NULL) == 0);
	CHECK_EQ_U64(site_misses_top(top), SITE_MISSES_TOP);
	for (unsigned k = 0; k < SITE_MISSES_TOP; k++) {
		/* The misses of site h * 100 come from the threads for which
		 * (h + 3t) % 8 is the same: each gives (that + 1) rounds. */
		uint64_t want = 0;
		const uint32_t h = top[k].site / 100;
		for (unsigned t = 0; t < NTHREADS; t++)
			for (unsigned x = 0; x < HOT_SITES; x++)
				if ((x + t * 3) % HOT_SITES == h)
					want += (uint64_t)(x + 1) * PER_SITE;
		CHECK_EQ_U64(top[k].site % 100, 0);
		CHECK_EQ_U64(top[k].total, want);
		CHECK_EQ_U64(top[k].by_reason[3] + top[k].by_reason[8], want);
		for (unsigned j = 0; j < k; j++)
			CHECK(top[j].site != top[k].site && top[j].total >= top[k].total);
	}
	site_misses_reset();
	puts("site misses: ranked, reset, and counted from 4 threads");
	return 0;
}
