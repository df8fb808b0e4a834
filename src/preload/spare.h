/* Spare space: what the plan could not serve, served from the arena's free
 * granules instead of libc.
 *
 * A run longer than its recording, or other than it, asks for blocks its plan
 * has no place for: a size bigger than any its site recorded, a loop's tail
 * whose places are all busy, a site past its last entry. Those went to libc,
 * whose heap then grew beside an arena that had room: the arena's pages that
 * the recorded part of the run touched are resident whatever they hold, and at
 * most moments much of them holds nothing. So a miss first looks for free
 * granules near where this thread last found some (next fit over the arena's
 * check words), and claims them with the arena's check like any planned block:
 * the soundness argument of arena.h covers it unchanged, and a block claimed so
 * is freed, resized and sized like any other. A search that finds nothing costs
 * a bounded scan; the thread then leaves its next misses to libc for a while,
 * twice as long after each failed search, so that a full arena costs little.
 * Before any search, the thread tries the places its last searches found: a
 * loop that outgrew its plan frees each such block soon, and its next one
 * fits where the last one was. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A block of size bytes (aligned to the granule) in free granules of the
 * arena, or NULL if the search found none. A block that keeps its place
 * (keeps: see below) takes no granule of a kept word. Thread-safe,
 * lock-free; does not allocate. With the guard set. */
void *spare_claim(size_t size, bool keeps);

/* Kept words: the words of the arena's check that hold places of loops'
 * tails (replay.c, tail_read). Between a loop's turns its places are
 * free, and a block that stays (a row of a table that grows with the input,
 * past the rows recorded) would hold one for good: the loop's blocks then go
 * to libc (a table growing beside a scratch loop, 20,000 rows on a plan of
 * 500: 2.8% of calls served, 67.6% with kept words). So a block of a site with
 * no steady state of its own, which piled up or came a few times when
 * recorded, keeps out of them; a steady site's block, which lives as briefly
 * as those the places hold, may use them. Pools' chunks are not kept: they
 * cover much of an arena, and kept, they left python3's longer run room for
 * fewer of its blocks (99.97% served instead of 100.00%); a slot taken is one
 * of many. */

/* Sets up the map of kept words for an arena of arena_size bytes, none kept
 * yet (mapped at the first word kept; a map that cannot be made keeps no
 * word). With one thread. */
void spare_keep_init(uint64_t arena_size);

/* Keeps the words that hold bytes [offset_bytes, offset_bytes + size_bytes) of
 * the arena (those past its end are ignored). Thread-safe. */
void spare_keep(uint64_t offset_bytes, uint64_t size_bytes);

/* Gives the map back: the arena's image is gone. With one thread. */
void spare_keep_drop(void);
