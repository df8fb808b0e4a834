/* One compiled copy of XXH3, see hash64.h. noinline, so that link-time
 * optimisation does not clone its long-input code into each caller again. */
#include "hash64.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

_Static_assert(sizeof(XXH3_state_t) <= sizeof(((struct hash64_stream *)0)->state),
	       "hash64_stream holds an XXH3_state_t");
_Static_assert(_Alignof(XXH3_state_t) <= 64, "hash64_stream aligns an XXH3_state_t");

__attribute__((noinline)) uint64_t hash64(const void *data, size_t len, uint64_t seed)
{
	return XXH3_64bits_withSeed(data, len, seed);
}

__attribute__((noinline)) void hash64_begin(struct hash64_stream *s)
{
	XXH3_64bits_reset((XXH3_state_t *)(void *)s->state);
}

__attribute__((noinline)) void hash64_add(struct hash64_stream *s, const void *data, size_t len)
{
	XXH3_64bits_update((XXH3_state_t *)(void *)s->state, data, len);
}

__attribute__((noinline)) uint64_t hash64_end(const struct hash64_stream *s)
{
	return XXH3_64bits_digest((const XXH3_state_t *)(const void *)s->state);
}
