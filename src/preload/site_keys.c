/* Call sites by key, see site_keys.h. */
#include "site_keys.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

#include "addr_map.h"
#include "real_libc.h"

static uint32_t home(const struct site_keys *t, uint64_t key)
{
	return (uint32_t)addr_map_mix(key ^ t->salt) & t->mask;
}

static uint64_t process_salt(void)
{
	const unsigned char *random = (const unsigned char *)getauxval(AT_RANDOM);
	uint64_t salt = 0;

	if (random)
		memcpy(&salt, random + 8, sizeof(salt)); /* glibc's stack guard takes the first 8 */
	return salt;
}

int site_keys_build(struct site_keys *t, const struct plan_site *sites, uint32_t n)
{
	uint64_t slots = 2;

	*t = (struct site_keys){0};
	if (n > UINT32_MAX / 4)
		return -ENOMEM; /* its slots would not fit the mask */
	while (slots < 2 * (uint64_t)n)
		slots *= 2;
	*t = (struct site_keys){.mask = (uint32_t)(slots - 1), .salt = process_salt()};
	t->keys = __libc_malloc((n ? n : 1) * sizeof(*t->keys));
	t->slots = __libc_calloc(slots, sizeof(*t->slots));
	if (!t->keys || !t->slots) {
		site_keys_free(t);
		return -ENOMEM;
	}
	t->count = n;
	for (uint32_t s = 0; s < n; s++) {
		uint32_t i = home(t, sites[s].key);

		t->keys[s] = sites[s].key;
		while (t->slots[i] && t->keys[t->slots[i] - 1] != sites[s].key)
			i = (i + 1) & t->mask;
		if (!t->slots[i])
			t->slots[i] = s + 1;
	}
	return 0;
}

uint32_t site_keys_find(const struct site_keys *t, uint64_t key)
{
	if (!t->slots)
		return SITE_KEYS_NONE;
	for (uint32_t i = home(t, key); t->slots[i]; i = (i + 1) & t->mask)
		if (t->keys[t->slots[i] - 1] == key)
			return t->slots[i] - 1;
	return SITE_KEYS_NONE;
}

uint64_t site_keys_key(const struct site_keys *t, uint32_t site)
{
	return site < t->count ? t->keys[site] : 0;
}

void site_keys_free(struct site_keys *t)
{
	__libc_free(t->keys);
	__libc_free(t->slots);
	*t = (struct site_keys){0};
}
