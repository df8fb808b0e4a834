/* The compact encoding of plan entries, see entry_codec.h. */
#include "entry_codec.h"

#include <errno.h>
#include <stdbool.h>

#define FLAG_INFINITE 1u
#define FLAG_IN_PLACE 2u
#define FLAG_ALIGN    4u

static uint8_t *put_varint(uint8_t *out, uint64_t v)
{
	while (v >= 0x80) {
		*out++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*out++ = (uint8_t)v;
	return out;
}

static uint64_t zigzag(uint64_t difference)
{
	return (difference << 1) ^ (uint64_t)((int64_t)difference >> 63);
}

static uint64_t unzigzag(uint64_t v)
{
	return (v >> 1) ^ (uint64_t)-(int64_t)(v & 1);
}

int64_t entry_codec_encode(const struct plan_entry *entries, uint32_t n, uint8_t *out)
{
	uint64_t prev_start = 0, prev_granule = 0;
	uint8_t *p = out;

	for (uint32_t k = 0; k < n; k++) {
		const struct plan_entry *e = &entries[k];
		uint64_t granule = e->offset_bytes / PLAN_GRANULE_BYTES;
		uint8_t flags = 0;

		if (e->offset_bytes % PLAN_GRANULE_BYTES || !e->align_bytes ||
		    (e->align_bytes & (e->align_bytes - 1)))
			return -EINVAL;
		flags |= e->t_end == PLAN_T_INFINITY ? FLAG_INFINITE : 0;
		flags |= e->in_place_of ? FLAG_IN_PLACE : 0;
		flags |= e->align_bytes != 1 ? FLAG_ALIGN : 0;
		*p++ = flags;
		p = put_varint(p, zigzag(e->t_start - prev_start));
		if (!(flags & FLAG_INFINITE))
			p = put_varint(p, e->t_end - e->t_start);
		p = put_varint(p, e->size_bytes);
		p = put_varint(p, zigzag(granule - prev_granule));
		if (flags & FLAG_ALIGN)
			*p++ = (uint8_t)__builtin_ctz(e->align_bytes);
		if (flags & FLAG_IN_PLACE)
			p = put_varint(p, e->in_place_of);
		prev_start = e->t_start;
		prev_granule = granule;
	}
	return p - out;
}

/* Reads one varint of at most 64 bits from [*p, end). */
static bool get_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	uint64_t value = 0;

	for (unsigned shift = 0; *p < end; shift += 7) {
		uint8_t byte = *(*p)++;
		/* The tenth byte holds bit 63 only. */
		if (shift == 63 && byte > 1)
			return false;
		value |= (uint64_t)(byte & 0x7f) << shift;
		if (!(byte & 0x80)) {
			*v = value;
			return true;
		}
		if (shift == 63)
			return false;
	}
	return false;
}

int entry_codec_decode(const uint8_t *in, size_t len, uint32_t n, uint32_t site,
		       uint64_t first_occurrence, struct plan_entry *out)
{
	const uint8_t *p = in, *end = in + len;
	uint64_t prev_start = 0, prev_granule = 0;

	for (uint32_t k = 0; k < n; k++) {
		struct plan_entry *e = &out[k];
		uint64_t delta, lifetime = 0, size, granule_delta, in_place = 0;
		uint8_t flags, align_log2 = 0;

		if (p == end)
			return -EINVAL;
		flags = *p++;
		if (flags & ~(FLAG_INFINITE | FLAG_IN_PLACE | FLAG_ALIGN))
			return -EINVAL;
		if (!get_varint(&p, end, &delta) ||
		    (!(flags & FLAG_INFINITE) && !get_varint(&p, end, &lifetime)) ||
		    !get_varint(&p, end, &size) || !get_varint(&p, end, &granule_delta))
			return -EINVAL;
		if (flags & FLAG_ALIGN) {
			if (p == end || *p > 31)
				return -EINVAL;
			align_log2 = *p++;
		}
		if ((flags & FLAG_IN_PLACE) && !get_varint(&p, end, &in_place))
			return -EINVAL;
		uint64_t granule = prev_granule + unzigzag(granule_delta);
		if (granule > UINT64_MAX / PLAN_GRANULE_BYTES)
			return -EINVAL;
		*e = (struct plan_entry){
		    .site = site,
		    .occurrence = (uint32_t)(first_occurrence + k),
		    .size_bytes = size,
		    .offset_bytes = granule * PLAN_GRANULE_BYTES,
		    .t_start = prev_start + unzigzag(delta),
		    .align_bytes = UINT32_C(1) << align_log2,
		    .in_place_of = in_place,
		};
		e->t_end = (flags & FLAG_INFINITE) ? PLAN_T_INFINITY : e->t_start + lifetime;
		prev_start = e->t_start;
		prev_granule = granule;
	}
	return p == end ? 0 : -EINVAL;
}
