/* The plan image's call sites by key (src/preload/site_keys.c): every site is
 * found by its key, the first of sites that share one, a key of 0 too; a key
 * of no site is not found; an empty image finds nothing; a count too big for
 * the table is refused. Then hostile keys: 20,000 sites of one key, and
 * 20,000 whose keys differ only above the bits a plain mask would take, are
 * indexed and found in time (the salt). */
#include <errno.h>
#include <string.h>

#include "check.h"
#include "site_keys.h"

#define SITES 5000

static struct plan_site sites[20000];

int main(void)
{
	struct site_keys t;
	uint64_t seed = 0x9e3779b97f4a7c15u;

	CHECK_EQ_U64(site_keys_build(&t, sites, 0), 0);
	CHECK_EQ_U64(site_keys_find(&t, 0), SITE_KEYS_NONE);
	CHECK_EQ_U64(site_keys_find(&t, 42), SITE_KEYS_NONE);
	CHECK_EQ_U64(site_keys_key(&t, 0), 0);
	site_keys_free(&t);
	CHECK_EQ_U64(site_keys_find(&t, 42), SITE_KEYS_NONE); /* freed: empty */

	/* Random keys; site 7 has key 0; sites 100..109 repeat site 50's key. */
	for (uint32_t s = 0; s < SITES; s++)
		sites[s].key = check_random(&seed);
	sites[7].key = 0;
	for (uint32_t s = 100; s < 110; s++)
		sites[s].key = sites[50].key;
	CHECK_EQ_U64(site_keys_build(&t, sites, SITES), 0);
	for (uint32_t s = 0; s < SITES; s++) {
		uint32_t expect = s >= 100 && s < 110 ? 50 : s;
		CHECK_EQ_U64(site_keys_find(&t, sites[s].key), expect);
		CHECK_EQ_U64(site_keys_key(&t, s), sites[s].key);
	}
	CHECK_EQ_U64(site_keys_key(&t, SITES), 0);
	for (int i = 0; i < 100000; i++) {
		uint64_t k = check_random(&seed);
		CHECK_EQ_U64(site_keys_find(&t, k), SITE_KEYS_NONE);
	}
	site_keys_free(&t);

	/* One key for all: every lookup finds the first, and each insert finds
	 * the key in its first slot. */
	for (uint32_t s = 0; s < 20000; s++)
		sites[s].key = 0xdeadbeef;
	CHECK_EQ_U64(site_keys_build(&t, sites, 20000), 0);
	CHECK_EQ_U64(site_keys_find(&t, 0xdeadbeef), 0);
	CHECK_EQ_U64(site_keys_find(&t, 0xdeadbeee), SITE_KEYS_NONE);
	site_keys_free(&t);

	/* Keys alike in their low 32 bits: a table indexed by them would put
	 * every one in the same slot. */
	for (uint32_t s = 0; s < 20000; s++)
		sites[s].key = (uint64_t)(s + 1) << 32;
	CHECK_EQ_U64(site_keys_build(&t, sites, 20000), 0);
	for (uint32_t s = 0; s < 20000; s++)
		CHECK_EQ_U64(site_keys_find(&t, sites[s].key), s);
	site_keys_free(&t);

	/* A count whose slots would not fit 32 bits is refused, nothing read. */
	CHECK_EQ_U64(site_keys_build(&t, NULL, UINT32_MAX), (uint64_t)-ENOMEM);
	CHECK_EQ_U64(site_keys_find(&t, 1), SITE_KEYS_NONE);
	return 0;
}
