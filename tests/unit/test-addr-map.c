/* addr_map against a plain array reference, through heavy insert/remove churn so
 * that backward-shift deletion and growth are both exercised. */
#include <stdint.h>
#include <stdlib.h>

#include "addr_map.h"
#include "check.h"

#define KEYS 5000

static uint64_t rng = 88172645463325252ull;

static uint64_t next_random(void)
{
	return check_random(&rng);
}

int main(void)
{
	static uint64_t reference[KEYS]; /* 0: absent, else value + 1 */
	struct addr_map map;

	CHECK(addr_map_init(&map, 4) == 0);
	for (int round = 0; round < 400000; round++) {
		/* Keys look like addresses: 16-byte aligned, clustered. */
		uint64_t i = next_random() % KEYS, key = 0x7f0000000000ull + i * 16, value;
		switch (next_random() % 3) {
		case 0:
		case 1:
			CHECK(addr_map_put(&map, key, round) == 0);
			reference[i] = (uint64_t)round + 1;
			break;
		default: {
			bool had = addr_map_remove(&map, key, &value);
			CHECK(had == (reference[i] != 0));
			if (had)
				CHECK_EQ_U64(value, reference[i] - 1);
			reference[i] = 0;
		}
		}
		if (round % 50000 == 0) {
			uint64_t count = 0;
			for (uint64_t k = 0; k < KEYS; k++) {
				bool found = addr_map_get(&map, 0x7f0000000000ull + k * 16, &value);
				CHECK(found == (reference[k] != 0));
				if (found)
					CHECK_EQ_U64(value, reference[k] - 1);
				count += found;
			}
			CHECK_EQ_U64(count, map.count);
		}
	}
	/* Cleared: nothing is found, and it fills again. */
	uint64_t value;
	addr_map_clear(&map);
	CHECK_EQ_U64(map.count, 0);
	for (uint64_t k = 0; k < KEYS; k++)
		CHECK(!addr_map_get(&map, 0x7f0000000000ull + k * 16, &value));
	CHECK(addr_map_put(&map, 0x7f0000000010ull, 7) == 0);
	CHECK(addr_map_get(&map, 0x7f0000000010ull, &value) && value == 7);
	addr_map_fini(&map);
	return 0;
}
