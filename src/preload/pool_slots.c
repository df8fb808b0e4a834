/* The replayed pools' slots, see pool_slots.h. */
#include "pool_slots.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "arena.h"
#include "real_libc.h"

uint32_t *pool_slots_page_map;
uint32_t *pool_slots_page_spans;
uint32_t *pool_slots_page_lines;
uint8_t *pool_slots_lines;
struct chunk_span *pool_slots_spans;
bool pool_slots_spans_disjoint;
static uint64_t page_map_bytes;	 /* each of the three maps' */
static struct chunk_span *spans; /* pool_slots_spans */
static uint32_t *span_of_chunk;	 /* by the plan's chunk index */
static uint32_t span_count;
static bool spans_disjoint; /* pool_slots_spans_disjoint */

static int by_start(const void *a, const void *b)
{
	const struct chunk_span *x = a, *y = b;

	return (x->start > y->start) - (x->start < y->start);
}

/* The words of pool k's slots, each chunk's first slot at a multiple of 64. */
static uint32_t pool_words(const struct plan_pool *pool, const struct plan_chunk *chunks)
{
	uint64_t words = 0;

	for (uint32_t c = pool->first_chunk; c < pool->first_chunk + pool->chunk_count; c++)
		words += (chunks[c].slot_count + 63) / 64;
	return words <= UINT32_MAX ? (uint32_t)words : 0;
}

/* Makes pool k's bits, all clear, and the offsets of its words. */
static int pool_make(struct pool_slots *p, const struct plan_pool *pool,
		     const struct plan_chunk *chunks)
{
	uint32_t w = 0;

	p->slot_bytes = pool->slot_bytes;
	p->align_bytes = pool->align_bytes;
	p->words = pool_words(pool, chunks);
	if (!p->words)
		return -ENOMEM;
	/* One block: the three bit arrays, then the words' offsets. */
	uint64_t *block = __libc_calloc(4 * (size_t)p->words, sizeof(uint64_t));
	if (!block)
		return -ENOMEM;
	p->ready = (_Atomic uint64_t *)block;
	p->owned = p->ready + p->words;
	p->fresh = p->owned + p->words;
	p->word_offset = block + 3 * (size_t)p->words;
	for (uint32_t c = pool->first_chunk; c < pool->first_chunk + pool->chunk_count; c++)
		for (uint32_t s = 0; s < chunks[c].slot_count; s += 64)
			p->word_offset[w++] = chunks[c].offset_bytes + s * pool->slot_bytes;
	return 0;
}

/* The line index of each page that POOL_SLOTS_LINES_MIN spans or more lie in
 * (pool_slots.h): for each 64-byte line, which of the page's spans is the
 * first that ends after the line's start. */
static int make_lines(const uint32_t *map, const uint32_t *in_page, uint32_t *page_lines)
{
	const uint64_t pages = page_map_bytes / sizeof(*map);
	uint64_t crowded = 0;

	for (uint64_t page = 0; page < pages; page++)
		crowded += in_page[page] >= POOL_SLOTS_LINES_MIN;
	if (!crowded)
		return 0;
	uint8_t *lines = __libc_malloc(crowded * POOL_SLOTS_PAGE_LINES);
	if (!lines)
		return -ENOMEM;
	uint32_t k = 0;
	for (uint64_t page = 0; page < pages; page++) {
		if (in_page[page] < POOL_SLOTS_LINES_MIN)
			continue;
		const struct chunk_span *first = &spans[map[page] - 1];
		/* At most 256 spans of 16-byte slots lie in a page: r fits. */
		uint32_t r = 0;
		for (uint32_t line = 0; line < POOL_SLOTS_PAGE_LINES; line++) {
			uint64_t start = (page << 12) + 64 * (uint64_t)line;
			while (r + 1 < in_page[page] && first[r].end <= start)
				r++;
			lines[(uint64_t)k * POOL_SLOTS_PAGE_LINES + line] = (uint8_t)r;
		}
		page_lines[page] = ++k;
	}
	pool_slots_lines = lines;
	return 0;
}

int pool_slots_init(const struct plan_pool *pools, uint32_t pool_count,
		    const struct plan_chunk *chunks, uint32_t chunk_count, uint64_t mapped_bytes,
		    struct pool_slots *slots)
{
	for (uint32_t k = 0; k < pool_count; k++)
		if (pool_make(&slots[k], &pools[k], chunks) < 0)
			return -ENOMEM;
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
			first_slot += (chunks[c].slot_count + 63) / 64 * 64;
		}
	}
	qsort(spans, span_count, sizeof(*spans), by_start);
	spans_disjoint = true;
	for (uint32_t i = 0; i < span_count; i++) {
		span_of_chunk[spans[i].chunk] = i;
		if (i && spans[i - 1].end > spans[i].start)
			spans_disjoint = false;
	}
	/* Untouched pages of the map read as zero: only the pools' pages cost. */
	page_map_bytes = ((mapped_bytes >> 12) + 1) * sizeof(uint32_t);
	uint32_t *map = mmap(NULL, 3 * page_map_bytes, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (map == MAP_FAILED)
		return -ENOMEM;
	uint32_t *in_page = map + page_map_bytes / sizeof(*map);
	uint32_t *page_lines = in_page + page_map_bytes / sizeof(*map);
	/* Later chunks first, so that each page ends up naming the first chunk in
	 * it (chunks do not overlap in a plan memplan wrote; in another, a page
	 * names one of them, and the rest are found by going on from there). */
	for (uint32_t i = span_count; i-- > 0;)
		for (uint64_t page = spans[i].start >> 12; page <= (spans[i].end - 1) >> 12; page++) {
			map[page] = i + 1;
			in_page[page]++;
		}
	if (spans_disjoint && make_lines(map, in_page, page_lines) < 0) {
		munmap(map, 3 * page_map_bytes);
		return -ENOMEM;
	}
	pool_slots_page_map = map;
	pool_slots_page_spans = in_page;
	pool_slots_page_lines = page_lines;
	pool_slots_spans = spans;
	pool_slots_spans_disjoint = spans_disjoint;
	return 0;
}

void pool_slots_fini(struct pool_slots *slots, uint32_t pool_count)
{
	for (uint32_t k = 0; slots && k < pool_count; k++)
		__libc_free((void *)slots[k].ready);
	if (pool_slots_page_map)
		munmap(pool_slots_page_map, 3 * page_map_bytes);
	pool_slots_page_map = NULL;
	pool_slots_page_spans = NULL;
	pool_slots_page_lines = NULL;
	__libc_free(pool_slots_lines);
	pool_slots_lines = NULL;
	pool_slots_spans = NULL;
	pool_slots_spans_disjoint = false;
	__libc_free(spans);
	__libc_free(span_of_chunk);
	spans = NULL;
	span_of_chunk = NULL;
	span_count = 0;
}

/* Sets the bits of slots [slot, end) of words. */
static void set_bits(_Atomic uint64_t *words, uint32_t slot, uint32_t end)
{
	while (slot < end) {
		uint32_t n = end - slot < 64 - slot % 64 ? end - slot : 64 - slot % 64;
		uint64_t mask = (n == 64 ? ~UINT64_C(0) : (UINT64_C(1) << n) - 1) << (slot % 64);
		lone_fetch_or(&words[slot / 64], mask);
		slot += n;
	}
}

void pool_slots_open(uint32_t chunk)
{
	struct chunk_span *s = &spans[span_of_chunk[chunk]];

	if (!atomic_exchange_explicit(&s->opened, true, memory_order_relaxed)) {
		set_bits(s->pool->fresh, s->first_slot, s->first_slot + s->slot_count);
		pool_slots_hint(&s->pool->fresh_maybe);
	}
}

/* Begins a search of the words that flag hints at: false if it need not look,
 * else the flag is cleared (whatever sets a bit from now on sets it again). */
static bool search_begins(_Atomic bool *flag)
{
	if (!atomic_load_explicit(flag, memory_order_relaxed))
		return false;
	atomic_store_explicit(flag, false, memory_order_relaxed);
	atomic_thread_fence(memory_order_seq_cst);
	return true;
}

/* Takes a set bit of words[0..count) from *cursor on, clearing it; its slot, or
 * UINT32_MAX if none is set. */
static uint32_t take_bit(_Atomic uint64_t *words, uint32_t count, _Atomic uint32_t *cursor)
{
	const uint32_t start = atomic_load_explicit(cursor, memory_order_relaxed);

	for (uint32_t n = 0, w = start < count ? start : 0; n < count; n++) {
		uint64_t bits = atomic_load_explicit(&words[w], memory_order_relaxed);
		while (bits) {
			const unsigned b = (unsigned)__builtin_ctzll(bits);
			if (lone_test_and_clear(&words[w], b)) {
				if (w != start)
					atomic_store_explicit(cursor, w, memory_order_relaxed);
				return 64 * w + b;
			}
			bits = atomic_load_explicit(&words[w], memory_order_relaxed);
		}
		if (++w == count)
			w = 0;
	}
	return UINT32_MAX;
}

static uint64_t slot_offset(const struct pool_slots *p, uint32_t slot)
{
	return p->word_offset[slot / 64] + (uint64_t)(slot % 64) * p->slot_bytes;
}

uint64_t pool_slots_take_search(struct pool_slots *p)
{
	if (!search_begins(&p->ready_maybe))
		return POOL_SLOTS_NONE;
	uint32_t slot = take_bit(p->ready, p->words, &p->cursor);

	if (slot == UINT32_MAX)
		return POOL_SLOTS_NONE;
	pool_slots_hint(&p->ready_maybe); /* others may be left */
	return slot_offset(p, slot);
}

uint64_t pool_slots_take_fresh(struct pool_slots *p, uint32_t tries)
{
	if (!tries || !search_begins(&p->fresh_maybe))
		return POOL_SLOTS_NONE;
	for (uint32_t t = 0; t < tries; t++) {
		uint32_t slot = take_bit(p->fresh, p->words, &p->fresh_cursor);
		if (slot == UINT32_MAX)
			return POOL_SLOTS_NONE; /* none left: the hint stays clear */
		if (t == 0)
			pool_slots_hint(&p->fresh_maybe); /* others may be left */
		uint64_t offset = slot_offset(p, slot);
		if (!arena_claim(offset, p->slot_bytes))
			continue; /* busy: fresh again once what holds it is freed */
		/* Owned and not ready: live. */
		lone_fetch_or(&p->owned[slot / 64], UINT64_C(1) << (slot % 64));
		return offset;
	}
	return POOL_SLOTS_NONE;
}

/* The last span from spans[first] on that starts at or before offset (or
 * spans[first], if none does): doubling steps, then halving them. A page may
 * hold dozens of small chunks (a pool per size band, a chunk per quarter of
 * its slots; with threads, each thread's pools): a walk through them cost
 * 14% of a 4-thread churn's replay. */
static uint32_t last_span_from(uint64_t offset, uint32_t first)
{
	uint32_t lo = first, step = 1;

	while (step < span_count - lo && spans[lo + step].start <= offset) {
		lo += step;
		step *= 2;
	}
	for (step /= 2; step; step /= 2)
		if (step < span_count - lo && spans[lo + step].start <= offset)
			lo += step;
	return lo;
}

/* The span at or after spans[first] that holds offset, an open one; its slot
 * there in *slot, and whether offset is that slot's start in *at_start. NULL
 * if none does. Called again with the *first it left, it finds the next one:
 * in a plan whose spans overlap (a hostile one) several may. */
static struct chunk_span *span_holding(uint64_t offset, uint32_t *first, uint32_t *slot,
				       bool *at_start)
{
	if (spans_disjoint && *first < span_count) {
		struct chunk_span *s = &spans[last_span_from(offset, *first)];
		*first = span_count; /* no other span holds it */
		if (s->start <= offset && offset < s->end &&
		    atomic_load_explicit(&s->opened, memory_order_relaxed)) {
			*at_start = chunk_span_slot(s, offset, slot);
			return s;
		}
		return NULL;
	}
	for (uint32_t i = *first; i < span_count && spans[i].start <= offset; i++) {
		struct chunk_span *s = &spans[i];
		if (offset >= s->end || !atomic_load_explicit(&s->opened, memory_order_relaxed))
			continue;
		*at_start = chunk_span_slot(s, offset, slot);
		*first = i + 1;
		return s;
	}
	return NULL;
}

enum pool_release pool_slots_release_in(uint64_t offset, uint32_t first)
{
	struct chunk_span *s;
	uint32_t slot;
	bool at_start;

	/* In a plan memplan wrote, one span holds offset; in a hostile one, the
	 * slot an owner holds is the only one owned there (pool_slots.h). */
	while ((s = span_holding(offset, &first, &slot, &at_start))) {
		uint64_t bit = UINT64_C(1) << (slot % 64);
		struct pool_slots *p = s->pool;
		if (!at_start || !(atomic_load_explicit(&p->owned[slot / 64], memory_order_relaxed) &
				   bit))
			continue;
		return pool_slots_give_back(p, slot);
	}
	return POOL_NOT_SLOT;
}

void pool_slots_freed_in(uint64_t offset, uint32_t first)
{
	struct chunk_span *s;
	uint32_t slot;
	bool at_start;

	while ((s = span_holding(offset, &first, &slot, &at_start))) {
		uint64_t bit = UINT64_C(1) << (slot % 64);
		if (!(atomic_load_explicit(&s->pool->owned[slot / 64], memory_order_relaxed) & bit)) {
			lone_fetch_or(&s->pool->fresh[slot / 64], bit);
			pool_slots_hint(&s->pool->fresh_maybe);
			return;
		}
	}
}
