/* The compact encoding of plan entries, see entry_codec.h. */
#include "entry_codec.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#define FLAG_INFINITE 1u
#define FLAG_IN_PLACE 2u
#define FLAG_ALIGN    4u
/* t_start, lifetime, size, offset. */
#define COLUMNS 4u

static uint64_t zigzag(uint64_t difference)
{
	return (difference << 1) ^ (uint64_t)((int64_t)difference >> 63);
}

static uint64_t unzigzag(uint64_t v)
{
	return (v >> 1) ^ (uint64_t) - (int64_t)(v & 1);
}

/* The bytes v needs, 0 to 8. */
static unsigned width_of(uint64_t v)
{
	return v ? 8 - (unsigned)__builtin_clzll(v) / 8 : 0;
}

static uint8_t *put_le(uint8_t *out, uint64_t v, unsigned width)
{
	for (unsigned i = 0; i < width; i++)
		out[i] = (uint8_t)(v >> (8 * i));
	return out + width;
}

/* The four columns of an entry's record, as numbers. */
struct columns {
	uint64_t v[COLUMNS];
};

static struct columns columns_of(const struct plan_entry *e, uint64_t prev_start,
				 uint64_t prev_granule)
{
	return (struct columns){{
	    zigzag(e->t_start - prev_start),
	    e->t_end == PLAN_T_INFINITY ? 0 : e->t_end - e->t_start,
	    e->size_bytes,
	    zigzag(e->offset_bytes / PLAN_GRANULE_BYTES - prev_granule),
	}};
}

static uint8_t flags_of(const struct plan_entry *e)
{
	return (uint8_t)((e->t_end == PLAN_T_INFINITY ? FLAG_INFINITE : 0) |
			 (e->in_place_of ? FLAG_IN_PLACE : 0) |
			 (e->align_bytes != 1 ? FLAG_ALIGN : 0));
}

/* Stores all eight bytes of v at p, little-endian, and returns p + width: the
 * bytes past width are overwritten by what follows, or lie in out's room. */
static inline uint8_t *put_wide(uint8_t *p, uint64_t v, unsigned width)
{
	if (__BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__)
		return put_le(p, v, width);
	memcpy(p, &v, 8);
	return p + width;
}

int64_t entry_codec_encode(const struct plan_entry *entries, uint32_t n, uint8_t *out)
{
	unsigned width[COLUMNS];
	uint64_t any[COLUMNS] = {0}, prev_start = 0, prev_granule = 0;
	uint8_t *p = out;

	for (uint32_t k = 0; k < n; k++) {
		const struct plan_entry *e = &entries[k];
		if (e->offset_bytes % PLAN_GRANULE_BYTES || !e->align_bytes ||
		    (e->align_bytes & (e->align_bytes - 1)))
			return -EINVAL;
		struct columns c = columns_of(e, prev_start, prev_granule);
		for (unsigned i = 0; i < COLUMNS; i++)
			any[i] |= c.v[i]; /* the widest value sets the highest byte */
		prev_start = e->t_start;
		prev_granule = e->offset_bytes / PLAN_GRANULE_BYTES;
	}
	for (unsigned i = 0; i < COLUMNS; i++)
		*p++ = (uint8_t)(width[i] = width_of(any[i]));
	/* put_wide may store up to 8 bytes from a column's start. The last of them
	 * ends at most 4 + 33 n + 8 bytes into out (widths, n records of at most 33
	 * bytes), within the n * ENTRY_CODEC_MAX_BYTES of its room for every n >= 1. */
	prev_start = prev_granule = 0;
	for (uint32_t k = 0; k < n; k++) {
		const struct plan_entry *e = &entries[k];
		struct columns c = columns_of(e, prev_start, prev_granule);
		*p++ = flags_of(e);
		for (unsigned i = 0; i < COLUMNS; i++)
			p = put_wide(p, c.v[i], width[i]);
		prev_start = e->t_start;
		prev_granule = e->offset_bytes / PLAN_GRANULE_BYTES;
	}
	for (uint32_t k = 0; k < n; k++) {
		const struct plan_entry *e = &entries[k];
		if (e->align_bytes != 1)
			*p++ = (uint8_t)__builtin_ctz(e->align_bytes);
		if (e->in_place_of)
			p = put_le(p, e->in_place_of, 8);
	}
	return p - out;
}

static inline uint64_t load8(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

/* A little-endian number of width bytes at p, byte by byte: near the end of the
 * input, where eight bytes cannot be read. */
static uint64_t get_le(const uint8_t *p, unsigned width)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < width; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* A block's widths, and from them each column's mask and place in a record and
 * the record's length: the block's first four bytes. */
struct layout {
	unsigned width[COLUMNS], at[COLUMNS];
	uint64_t mask[COLUMNS], stride;
};

static int read_layout(const uint8_t *in, size_t len, struct layout *l)
{
	if (len < COLUMNS)
		return -EINVAL;
	l->stride = 1;
	for (unsigned i = 0; i < COLUMNS; i++) {
		l->width[i] = in[i];
		if (l->width[i] > 8)
			return -EINVAL;
		l->at[i] = (unsigned)l->stride;
		l->mask[i] =
		    l->width[i] == 8 ? ~UINT64_C(0) : (UINT64_C(1) << (8 * l->width[i])) - 1;
		l->stride += l->width[i];
	}
	return 0;
}

/* The records of a block: n of them after the widths, and the tail after them,
 * or NULL if the block is too short to hold them. */
static const uint8_t *records_end(const uint8_t *in, size_t len, uint32_t n, const struct layout *l)
{
	const uint8_t *p = in + COLUMNS;

	return (uint64_t)(in + len - p) / l->stride < n ? NULL : p + l->stride * n;
}

int entry_codec_decode(const uint8_t *in, size_t len, uint32_t n, uint32_t site,
		       uint64_t first_occurrence, struct plan_entry *out)
{
	const uint8_t *p = in + COLUMNS, *end = in + len, *tail;
	uint64_t prev_start = 0, prev_granule = 0;
	struct layout l;

	if (read_layout(in, len, &l) < 0 || !(tail = records_end(in, len, n, &l)))
		return -EINVAL;
	for (uint32_t k = 0; k < n; k++, p += l.stride) {
		uint8_t flags = *p;
		uint64_t c[COLUMNS], align_log2 = 0, in_place = 0;

		if (flags & ~(FLAG_INFINITE | FLAG_IN_PLACE | FLAG_ALIGN))
			return -EINVAL;
		/* Whole words where they can be read: no branch on the widths. */
		if (end - p >= (ptrdiff_t)(l.stride + 8)) {
			for (unsigned i = 0; i < COLUMNS; i++)
				c[i] = load8(p + l.at[i]) & l.mask[i];
		} else {
			for (unsigned i = 0; i < COLUMNS; i++)
				c[i] = get_le(p + l.at[i], l.width[i]);
		}
		if (flags & FLAG_ALIGN) {
			if (tail == end || *tail > 31)
				return -EINVAL;
			align_log2 = *tail++;
		}
		if (flags & FLAG_IN_PLACE) {
			if (end - tail < 8)
				return -EINVAL;
			in_place = get_le(tail, 8);
			tail += 8;
		}
		uint64_t granule = prev_granule + unzigzag(c[3]);
		if (granule > UINT64_MAX / PLAN_GRANULE_BYTES)
			return -EINVAL;
		prev_granule = granule;
		struct plan_entry *e = &out[k];
		e->site = site;
		e->occurrence = (uint32_t)(first_occurrence + k);
		e->size_bytes = c[2];
		e->offset_bytes = granule * PLAN_GRANULE_BYTES;
		e->t_start = prev_start + unzigzag(c[0]);
		e->t_end = (flags & FLAG_INFINITE) ? PLAN_T_INFINITY : e->t_start + c[1];
		e->align_bytes = UINT32_C(1) << align_log2;
		e->flags = 0;
		e->in_place_of = in_place;
		prev_start = e->t_start;
	}
	return tail == end ? 0 : -EINVAL;
}

/* Whether the tail of a block whose records [p, tail) carry these flags is what
 * they call for, as entry_codec_decode reads it: an alignment byte of at most 31
 * for each entry flagged so, 8 bytes for each with in_place_of, in entry order,
 * and nothing more. */
static bool tail_fits(const uint8_t *p, const uint8_t *tail, const uint8_t *end, uint64_t stride,
		      uint8_t any)
{
	if (!(any & FLAG_IN_PLACE)) {
		/* Alignment bytes alone: one per flagged entry. */
		uint64_t aligned = 0;
		for (; p < tail; p += stride)
			aligned += (*p & FLAG_ALIGN) != 0;
		if ((uint64_t)(end - tail) != aligned)
			return false;
		for (; tail < end; tail++)
			if (*tail > 31)
				return false;
		return true;
	}
	for (const uint8_t *at = tail; p < tail; p += stride) {
		if (*p & FLAG_ALIGN) {
			if (at == end || *at > 31)
				return false;
			at++;
		}
		if (*p & FLAG_IN_PLACE) {
			if (end - at < 8)
				return false;
			at += 8;
		}
		if (p + stride == tail)
			return at == end;
	}
	return false; /* not reached: n >= 1 records */
}

/* Replay reads every entry through here, so it does only what it keeps: the
 * size and offset columns, and the flags for the checks, which go after the
 * loop (a reserved flag, an offset past 2^64, a tail that does not fit) or, for
 * the tail, in a second pass only if some entry has one. It refuses exactly
 * what entry_codec_decode refuses (the fuzzer holds the two to it). */
int entry_codec_decode_places(const uint8_t *in, size_t len, uint32_t n, _Atomic uint64_t *places)
{
	const uint8_t *p = in + COLUMNS, *end = in + len, *tail;
	uint64_t granule = 0, overflow = 0;
	uint8_t any = 0;
	struct layout l;

	if (read_layout(in, len, &l) < 0 || !(tail = records_end(in, len, n, &l)))
		return -EINVAL;
	const unsigned at_size = l.at[2], at_offset = l.at[3];
	const uint64_t mask_size = l.mask[2], mask_offset = l.mask[3];
	/* Records from which eight bytes can be read at every column. */
	const uint64_t room = (uint64_t)(end - p);
	uint64_t wide = room >= l.stride + 8 ? (room - l.stride - 8) / l.stride + 1 : 0;
	_Atomic uint64_t *out = places, *const out_end = places + n;
	_Atomic uint64_t *const wide_end = places + (wide < n ? wide : n);
	for (; out < wide_end; out++, p += l.stride) {
		any |= *p;
		granule += unzigzag(load8(p + at_offset) & mask_offset);
		overflow |= granule > UINT64_MAX / PLAN_GRANULE_BYTES;
		atomic_store_explicit(
		    out, entry_codec_place_granule(granule, load8(p + at_size) & mask_size),
		    memory_order_relaxed);
	}
	for (; out < out_end; out++, p += l.stride) {
		any |= *p;
		granule += unzigzag(get_le(p + at_offset, l.width[3]));
		overflow |= granule > UINT64_MAX / PLAN_GRANULE_BYTES;
		atomic_store_explicit(
		    out, entry_codec_place_granule(granule, get_le(p + at_size, l.width[2])),
		    memory_order_relaxed);
	}
	if (overflow || any & ~(FLAG_INFINITE | FLAG_IN_PLACE | FLAG_ALIGN))
		return -EINVAL;
	if (!(any & (FLAG_ALIGN | FLAG_IN_PLACE)))
		return tail == end ? 0 : -EINVAL;
	return tail_fits(in + COLUMNS, tail, end, l.stride, any) ? 0 : -EINVAL;
}
