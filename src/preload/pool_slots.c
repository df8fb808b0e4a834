/* Free-slot hints of the replayed pools, see pool_slots.h. */
#include "pool_slots.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "real_libc.h"

/* A chunk, as the map finds it: its bytes, its pool's bits, its first slot's
 * number in the pool, and its slot size as a multiplier (the number of a slot
 * is then a multiplication, not a division). */
struct chunk_span {
	uint64_t start, end;
	struct pool_slots *pool;
	uint32_t first_slot, slot_count;
	uint32_t chunk;	     /* its index in the plan */
	_Atomic bool opened; /* pool_slots_open */
	uint64_t slot_bytes;
	uint64_t inverse; /* 2^64 / slot_bytes + 1: exact for offsets below 2^32 */
};

uint32_t *pool_slots_page_map;
static uint64_t page_map_bytes;
static struct chunk_span *spans;    /* by offset */
static uint32_t *span_of_chunk;	    /* by the plan's chunk index */
static uint32_t span_count;

static int by_start(const void *a, const void *b)
{
	const struct chunk_span *x = a, *y = b;

	return (x->start > y->start) - (x->start < y->start);
}

int pool_slots_init(const struct plan_pool *pools, uint32_t pool_count,
		    const struct plan_chunk *chunks, uint32_t chunk_count, uint64_t arena_bytes,
		    struct pool_slots *slots)
{
	for (uint32_t k = 0; k < pool_count; k++) {
		slots[k].words = (pools[k].slot_count + 63) / 64;
		slots[k].bits = __libc_calloc(slots[k].words ? slots[k].words : 1, sizeof(uint64_t));
		if (!slots[k].bits)
			return -ENOMEM;
	}
	if (!chunk_count)
		return 0;
	spans = __libc_malloc(chunk_count * sizeof(*spans));
	span_of_chunk = __libc_malloc(chunk_count * sizeof(*span_of_chunk));
	if (!spans || !span_of_chunk)
		return -ENOMEM;
	for (uint32_t k = 0; k < pool_count; k++) {
		uint32_t first_slot = 0;
		for (uint32_t c = pools[k].first_chunk; c < pools[k].first_chunk + pools[k].chunk_count;
		     c++) {
			uint64_t bytes = pools[k].slot_bytes * chunks[c].slot_count;
			spans[span_count++] = (struct chunk_span){
			    .start = chunks[c].offset_bytes,
			    .end = chunks[c].offset_bytes + bytes,
			    .pool = &slots[k],
			    .first_slot = first_slot,
			    .slot_count = chunks[c].slot_count,
			    .chunk = c,
			    .slot_bytes = pools[k].slot_bytes,
			    .inverse = UINT64_MAX / pools[k].slot_bytes + 1,
			};
			first_slot += chunks[c].slot_count;
		}
	}
	qsort(spans, span_count, sizeof(*spans), by_start);
	for (uint32_t i = 0; i < span_count; i++)
		span_of_chunk[spans[i].chunk] = i;
	/* Untouched pages of the map read as zero: only the pools' pages cost. */
	page_map_bytes = ((arena_bytes >> 12) + 1) * sizeof(uint32_t);
	uint32_t *map = mmap(NULL, page_map_bytes, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (map == MAP_FAILED)
		return -ENOMEM;
	/* Later chunks first, so that each page ends up naming the first chunk in
	 * it (chunks do not overlap in a plan memplan wrote; in another, a page
	 * names one of them, and the rest only lose hints). */
	for (uint32_t i = span_count; i-- > 0;)
		for (uint64_t page = spans[i].start >> 12; page <= (spans[i].end - 1) >> 12; page++)
			map[page] = i + 1;
	pool_slots_page_map = map;
	return 0;
}

void pool_slots_fini(struct pool_slots *slots, uint32_t pool_count)
{
	for (uint32_t k = 0; slots && k < pool_count; k++)
		__libc_free(slots[k].bits);
	if (pool_slots_page_map)
		munmap(pool_slots_page_map, page_map_bytes);
	pool_slots_page_map = NULL;
	__libc_free(spans);
	__libc_free(span_of_chunk);
	spans = NULL;
	span_of_chunk = NULL;
	span_count = 0;
}

void pool_slots_open(uint32_t chunk)
{
	struct chunk_span *s = &spans[span_of_chunk[chunk]];
	uint32_t slot = s->first_slot, end = s->first_slot + s->slot_count;

	if (atomic_exchange_explicit(&s->opened, true, memory_order_relaxed))
		return;
	while (slot < end) {
		uint32_t n = end - slot < 64 - slot % 64 ? end - slot : 64 - slot % 64;
		uint64_t mask = (n == 64 ? ~UINT64_C(0) : (UINT64_C(1) << n) - 1) << (slot % 64);
		lone_fetch_or(&s->pool->bits[slot / 64], mask);
		slot += n;
	}
}

uint32_t pool_slots_search(struct pool_slots *p)
{
	const uint32_t start = atomic_load_explicit(&p->cursor, memory_order_relaxed);

	for (uint32_t n = 0, w = start < p->words ? start : 0; n < p->words; n++) {
		uint64_t bits = atomic_load_explicit(&p->bits[w], memory_order_relaxed);
		while (bits) {
			uint64_t bit = bits & -bits;
			if (lone_fetch_and(&p->bits[w], ~bit) & bit) {
				if (w != start)
					atomic_store_explicit(&p->cursor, w, memory_order_relaxed);
				return 64 * w + (uint32_t)__builtin_ctzll(bit);
			}
			bits = atomic_load_explicit(&p->bits[w], memory_order_relaxed);
		}
		if (++w == p->words)
			w = 0;
	}
	return UINT32_MAX;
}

void pool_slots_freed_in(uint64_t offset, uint32_t first)
{
	for (uint32_t i = first; i < span_count && spans[i].start <= offset; i++) {
		struct chunk_span *s = &spans[i];
		if (offset >= s->end || !atomic_load_explicit(&s->opened, memory_order_relaxed))
			continue;
		uint64_t into = offset - s->start;
		uint64_t slot = into >> 32 ? into / s->slot_bytes
					   : (uint64_t)(((unsigned __int128)into * s->inverse) >> 64);
		slot += s->first_slot;
		lone_fetch_or(&s->pool->bits[slot / 64], UINT64_C(1) << (slot % 64));
		return;
	}
}
