/* The compact encoding of plan entries (plan file version 2).
 *
 * A site's entries are stored in blocks of PLAN_BLOCK_ENTRIES (plan_file.h)
 * consecutive occurrences, each block encoded on its own so that replay can read
 * and decode the block it needs without the ones before it. A block is columns of
 * fixed width, chosen per block, so that decoding takes no data-dependent branch:
 *
 *   4 bytes        the widths (0 to 8 bytes) of the four numbers below
 *   n records      a flags byte (bit 0: t_end is infinite; bit 1: in_place_of
 *                  follows in the tail; bit 2: an alignment byte follows in the
 *                  tail, else align_bytes is 1; other bits 0), then, little-endian
 *                  in their widths:
 *                    t_start   zigzag of the difference from the previous entry's
 *                              (0 before the block's first)
 *                    lifetime  t_end - t_start (0 if infinite)
 *                    size_bytes
 *                    offset    zigzag of the difference, in 16-byte granules, from
 *                              the previous entry's offset (0 before the first)
 *   tail           for each entry in order: its alignment byte, log2(align_bytes)
 *                  at most 31, if flagged; its in_place_of, 8 bytes, if flagged
 *
 * site and occurrence are not stored: the block's position gives them. An entry of
 * a recording takes about 10 bytes instead of the 56 of struct plan_entry. The
 * codec checks only the encoding; plan_file.c checks what the values mean.
 * Pure; thread-safe; does not allocate. */
#pragma once

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "plan_file.h"

/* The most bytes one entry can take: its share of the widths, the flags, four
 * 8-byte numbers, the alignment byte and in_place_of. */
#define ENTRY_CODEC_MAX_BYTES 48u

/* Encodes entries[0..n) as one block into out, which has room for
 * n * ENTRY_CODEC_MAX_BYTES bytes. Returns the bytes written, or -EINVAL if an
 * entry cannot be encoded (an offset that is not a multiple of 16, an alignment
 * that is not a power of two below 2^32). */
int64_t entry_codec_encode(const struct plan_entry *entries, uint32_t n, uint8_t *out);

/* Decodes exactly n entries of site, the first being occurrence first_occurrence,
 * from in[0..len), which they must fill exactly. Returns 0, or -EINVAL (truncated,
 * trailing bytes, a width over 8, reserved flags set, an alignment byte over 31,
 * an offset past 2^64). Never reads outside in[0..len). */
int entry_codec_decode(const uint8_t *in, size_t len, uint32_t n, uint32_t site,
		       uint64_t first_occurrence, struct plan_entry *out);

/* What replay needs of an entry, in 8 bytes, its *place*: its offset in 16-byte
 * granules in the low 32 bits, its size in granules, rounded up, in the high
 * 32 (the arena claims whole granules anyway). An entry that does not fit so
 * (an offset or a size of 64 GiB or more) has place 0: no bytes, which no
 * request fits. */
static inline uint64_t entry_codec_place_granule(uint64_t granule, uint64_t size_bytes)
{
	const uint64_t granules = plan_granules_of(size_bytes);

	return (granule | granules) >> 32 ? 0 : granule | granules << 32;
}

static inline uint64_t entry_codec_place(uint64_t offset_bytes, uint64_t size_bytes)
{
	return offset_bytes % PLAN_GRANULE_BYTES
		   ? 0
		   : entry_codec_place_granule(offset_bytes / PLAN_GRANULE_BYTES, size_bytes);
}

static inline uint64_t entry_codec_place_offset(uint64_t place)
{
	return (uint64_t)(uint32_t)place * PLAN_GRANULE_BYTES;
}

static inline uint64_t entry_codec_place_size(uint64_t place)
{
	return (place >> 32) * PLAN_GRANULE_BYTES;
}

/* Decodes the same, with the same checks, but only each entry's place, into
 * places[0..n): atomics, stored relaxed, so that the readers of a sequence lock
 * may load them while a decode rewrites them. On failure, places may be partly
 * written. */
int entry_codec_decode_places(const uint8_t *in, size_t len, uint32_t n, _Atomic uint64_t *places);
