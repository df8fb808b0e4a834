/* The compact entry encoding of plan file version 2: random blocks with extreme
 * values round-trip, every truncation and malformed block fails cleanly, and a
 * recording's entries take a fraction of their in-memory size. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "check.h"
#include "entry_codec.h"

#define N PLAN_BLOCK_ENTRIES

static void check_same(const struct plan_entry *a, const struct plan_entry *b)
{
	CHECK_EQ_U64(a->site, b->site);
	CHECK_EQ_U64(a->occurrence, b->occurrence);
	CHECK_EQ_U64(a->size_bytes, b->size_bytes);
	CHECK_EQ_U64(a->offset_bytes, b->offset_bytes);
	CHECK_EQ_U64(a->t_start, b->t_start);
	CHECK_EQ_U64(a->t_end, b->t_end);
	CHECK_EQ_U64(a->align_bytes, b->align_bytes);
	CHECK_EQ_U64(a->in_place_of, b->in_place_of);
	CHECK_EQ_U64(a->flags, 0);
}

/* Entries as a recording makes them: rising starts, short lives, small sizes. */
static void recording_like(struct plan_entry *e, uint32_t site, uint64_t first, uint64_t *seed)
{
	uint64_t t = check_random(seed) % 1000;

	for (uint32_t k = 0; k < N; k++) {
		t += 1 + check_random(seed) % 12;
		e[k] = (struct plan_entry){
		    .site = site,
		    .occurrence = (uint32_t)(first + k),
		    .size_bytes = 16 + check_random(seed) % 500,
		    .offset_bytes = (check_random(seed) % (1 << 20)) * 16,
		    .t_start = t,
		    .t_end = check_random(seed) % 20 ? t + 1 + check_random(seed) % 3000
						     : PLAN_T_INFINITY,
		    .align_bytes = 1,
		};
	}
}

/* Anything the format can hold, extremes included. */
static void extreme(struct plan_entry *e, uint32_t site, uint64_t first, uint64_t *seed)
{
	static const uint64_t values[] = {
	    0, 1, 127, 128, UINT32_MAX, UINT64_MAX / 2, UINT64_MAX - 1, UINT64_MAX};
	for (uint32_t k = 0; k < N; k++) {
		uint64_t r = check_random(seed);
		e[k] = (struct plan_entry){
		    .site = site,
		    .occurrence = (uint32_t)(first + k),
		    .size_bytes = values[r % 8],
		    .offset_bytes = (values[(r >> 3) % 8] / 16) * 16,
		    .t_start = values[(r >> 6) % 8],
		    .t_end = values[(r >> 9) % 8],
		    .align_bytes = UINT32_C(1) << ((r >> 12) % 32),
		    .in_place_of = (r >> 17) % 3 ? 0 : values[(r >> 19) % 8],
		};
	}
}

/* A place keeps the offset, and the size rounded up to whole granules; or is
 * 0 if either needs more than 32 bits of granules. */
static void check_place(uint64_t place, uint64_t offset_bytes, uint64_t size_bytes)
{
	const uint64_t limit = (UINT64_C(1) << 32) * PLAN_GRANULE_BYTES;

	if (offset_bytes >= limit || size_bytes > limit - PLAN_GRANULE_BYTES) {
		CHECK_EQ_U64(place, 0);
		return;
	}
	CHECK_EQ_U64(entry_codec_place_offset(place), offset_bytes);
	CHECK(entry_codec_place_size(place) >= size_bytes);
	CHECK(entry_codec_place_size(place) < size_bytes + PLAN_GRANULE_BYTES);
	CHECK_EQ_U64(entry_codec_place_size(place) % PLAN_GRANULE_BYTES, 0);
}

int main(void)
{
	static struct plan_entry in[N], out[N];
	static _Atomic uint64_t places[N];
	static uint8_t buf[N * ENTRY_CODEC_MAX_BYTES + 1];
	uint64_t seed = 11, recording_bytes = 0;

	for (int round = 0; round < 2000; round++) {
		bool typical = round % 2 == 0;
		uint64_t first = check_random(&seed) % 1000000;
		(typical ? recording_like : extreme)(in, 3, first, &seed);
		int64_t len = entry_codec_encode(in, N, buf);
		CHECK(len > 0 && len <= (int64_t)(N * ENTRY_CODEC_MAX_BYTES));
		CHECK(entry_codec_decode(buf, (size_t)len, N, 3, first, out) == 0);
		for (uint32_t k = 0; k < N; k++)
			check_same(&in[k], &out[k]);
		/* Replay's decoder gives the same places. */
		CHECK(entry_codec_decode_places(buf, (size_t)len, N, places) == 0);
		for (uint32_t k = 0; k < N; k++) {
			const uint64_t place = atomic_load(&places[k]);
			CHECK_EQ_U64(place,
				     entry_codec_place(in[k].offset_bytes, in[k].size_bytes));
			check_place(place, in[k].offset_bytes, in[k].size_bytes);
		}
		if (typical)
			recording_bytes += (uint64_t)len;
		/* Every truncation and one byte too many are refused. */
		if (round < 40) {
			for (int64_t cut = 0; cut < len; cut++) {
				CHECK(entry_codec_decode(buf, (size_t)cut, N, 3, first, out) ==
				      -EINVAL);
				CHECK(entry_codec_decode_places(buf, (size_t)cut, N, places) ==
				      -EINVAL);
			}
			buf[len] = 0;
			CHECK(entry_codec_decode(buf, (size_t)len + 1, N, 3, first, out) ==
			      -EINVAL);
			CHECK(entry_codec_decode_places(buf, (size_t)len + 1, N, places) ==
			      -EINVAL);
		}
	}
	/* The encoder stays inside its room of n * ENTRY_CODEC_MAX_BYTES whatever the
	 * values, also for the shortest blocks (it stores eight bytes at a time). */
	for (uint32_t n = 1; n <= 16; n++) {
		for (int round = 0; round < 200; round++) {
			uint8_t room[16 * ENTRY_CODEC_MAX_BYTES + 16];
			memset(room, 0xa5, sizeof(room));
			extreme(in, 1, 0, &seed);
			CHECK(entry_codec_encode(in, n, room) > 0);
			for (size_t i = n * ENTRY_CODEC_MAX_BYTES; i < sizeof(room); i++)
				CHECK(room[i] == 0xa5);
		}
	}
	/* Places at their limits: 2^32 granules of offset or of size do not fit. */
	const uint64_t g32 = (UINT64_C(1) << 32) * PLAN_GRANULE_BYTES;
	static const uint64_t edges[][2] = {
	    {0, 1},	      {32, 17},	      {48, 48},	      {0, 0},	 {g32 - 16, 16},
	    {g32, 16},	      {16, g32 - 16}, {16, g32 - 15}, {16, g32}, {UINT64_MAX - 15, 1},
	    {16, UINT64_MAX},
	};
	for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++)
		check_place(entry_codec_place(edges[i][0], edges[i][1]), edges[i][0], edges[i][1]);
	CHECK_EQ_U64(entry_codec_place(8, 16), 0); /* off the granule */
	CHECK_EQ_U64(entry_codec_place(g32, 16), 0);
	CHECK_EQ_U64(entry_codec_place(16, g32 - 15), 0);

	/* A recording's entries take well under a quarter of their 56 in-memory bytes. */
	CHECK(recording_bytes / (1000 * N) <= 12);

	/* What cannot be encoded is refused. */
	recording_like(in, 0, 0, &seed);
	in[5].offset_bytes = 8;
	CHECK(entry_codec_encode(in, N, buf) == -EINVAL);
	in[5].offset_bytes = 16;
	in[7].align_bytes = 3;
	CHECK(entry_codec_encode(in, N, buf) == -EINVAL);

	/* Malformed encodings: reserved flags, a width over 8, a bad alignment byte. */
	const uint8_t reserved[] = {0, 0, 0, 0, 0x08};
	CHECK(entry_codec_decode(reserved, sizeof(reserved), 1, 0, 0, out) == -EINVAL);
	CHECK(entry_codec_decode_places(reserved, sizeof(reserved), 1, places) == -EINVAL);
	const uint8_t wide[] = {9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
	CHECK(entry_codec_decode(wide, sizeof(wide), 1, 0, 0, out) == -EINVAL);
	CHECK(entry_codec_decode_places(wide, sizeof(wide), 1, places) == -EINVAL);
	const uint8_t align[] = {0, 0, 0, 0, 0x05, 32};
	CHECK(entry_codec_decode(align, sizeof(align), 1, 0, 0, out) == -EINVAL);
	CHECK(entry_codec_decode_places(align, sizeof(align), 1, places) == -EINVAL);
	const uint8_t fine[] = {0, 0, 0, 0, 0x05, 31};
	CHECK(entry_codec_decode(fine, sizeof(fine), 1, 0, 0, out) == 0);
	CHECK_EQ_U64(out[0].align_bytes, UINT32_C(1) << 31);
	CHECK_EQ_U64(out[0].t_end, PLAN_T_INFINITY);

	/* Damaged blocks: replay's decoder refuses exactly what the full one
	 * refuses, and where both accept, agrees on every offset and size. Blocks
	 * of every length, with and without tails, a few bytes changed at random. */
	for (int round = 0; round < 20000; round++) {
		uint32_t n = 1 + (uint32_t)(check_random(&seed) % N);
		(round % 3 ? recording_like : extreme)(in, 0, 0, &seed);
		int64_t len = entry_codec_encode(in, n, buf);
		CHECK(len > 0);
		for (int flips = 1 + (int)(check_random(&seed) % 3); flips > 0; flips--) {
			uint64_t r = check_random(&seed);
			/* Widths and flags are where the two decoders' checks differ most. */
			int64_t at = r % 4 ? (int64_t)(r >> 8) % len : (int64_t)(r >> 8) % 8;
			buf[at < len ? at : 0] ^= (uint8_t)(1u << ((r >> 4) % 8));
		}
		int full = entry_codec_decode(buf, (size_t)len, n, 0, 0, out);
		CHECK(entry_codec_decode_places(buf, (size_t)len, n, places) == full);
		for (uint32_t k = 0; full == 0 && k < n; k++) {
			CHECK_EQ_U64(atomic_load(&places[k]),
				     entry_codec_place(out[k].offset_bytes, out[k].size_bytes));
		}
	}
	return 0;
}
