/* 64-bit hashes (xxHash's XXH3), from one compiled copy.
 *
 * Each file that inlined xxhash.h carried its own copies of XXH3's code for
 * long inputs: 21 KiB of the 128 KiB of code libmemplan.so maps into every
 * replayed program. Here it is compiled once and called. Pure, thread-safe. */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* XXH3_64bits_withSeed (seed 0: XXH3_64bits). */
uint64_t hash64(const void *data, size_t len, uint64_t seed);

/* The hash of a sequence of pieces, the same as hash64(all, len, 0). */
struct hash64_stream {
	_Alignas(64) unsigned char state[576]; /* an XXH3_state_t (hash64.c checks) */
};
void hash64_begin(struct hash64_stream *s);
void hash64_add(struct hash64_stream *s, const void *data, size_t len);
uint64_t hash64_end(const struct hash64_stream *s);
