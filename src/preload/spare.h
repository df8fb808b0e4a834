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

#include <stddef.h>

/* A block of size bytes (aligned to the granule) in free granules of the
 * arena, or NULL if the search found none. Thread-safe, lock-free; does not
 * allocate. With the guard set. */
void *spare_claim(size_t size);
