/* Allocation routing, see route.h. */
#include "route.h"

#include <stdint.h>
#include <string.h>

#include "arena.h"
#include "next_alloc.h"
#include "pool_slots.h"
#include "record.h"
#include "replay.h"

static void *libc_alloc(enum alloc_kind kind, size_t align, size_t size)
{
	switch (kind) {
	case ALLOC_CALLOC:
		return next_calloc(1, size);
	case ALLOC_MEMALIGN:
		return next_memalign(align, size);
	default:
		return next_malloc(size);
	}
}

static size_t libc_usable(void *p)
{
	return p ? next_usable_size(p) : 0;
}

void *route_alloc(enum alloc_kind kind, size_t align, size_t size)
{
	void *p;

	guard_enter();
	/* A size no allocator can give (glibc refuses any over PTRDIFF_MAX, with
	 * ENOMEM) asks for no memory: not an allocation to count, served or
	 * missed, nor one a --min-hit-rate should hold against the program. */
	switch (size > PTRDIFF_MAX ? PRELOAD_OFF : preload_mode_now()) {
	case PRELOAD_REPLAY:
		p = replay_alloc(size, align, kind == ALLOC_CALLOC);
		if (!p) {
			p = libc_alloc(kind, align, size);
			if (replay_tracks_libc())
				replay_note_libc((int64_t)libc_usable(p));
		}
		break;
	case PRELOAD_RECORD:
		p = libc_alloc(kind, align, size);
		record_alloc(p, size, align);
		break;
	default:
		p = libc_alloc(kind, align, size);
		break;
	}
	guard_leave();
	return p;
}

void route_free_not_arena(void *p)
{
	if (!arena_retired_owns(p))
		next_free(p);
}

void route_free(void *p)
{
	if (!p)
		return;
	guard_enter();
	if (arena_owns(p)) {
		if (!pool_slots_arena_free(p))
			arena_bad_pointer("free", p);
	} else if (!arena_retired_owns(p)) { /* those are never freed (arena.h) */
		switch (preload_mode_now()) {
		case PRELOAD_RECORD:
			record_free(p);
			break;
		case PRELOAD_REPLAY:
			if (replay_tracks_libc())
				replay_note_libc(-(int64_t)libc_usable(p));
			break;
		default:
			break;
		}
		next_free(p);
	}
	guard_leave();
}

/* realloc of an arena block: in place if it fits the planned size, else moved to
 * the next planned block of the caller's site or to libc. Called inside memplan
 * already (a signal handler that interrupted it), it claims nothing: with one
 * thread the arena's words are updated without atomics (lone_atomic.h), and a
 * claim must never interleave with one it interrupted. A block of a retired
 * arena (arena.h) is resized the same way, but never released, and its
 * reallocation in place is not one the plan counts. */
static void *realloc_arena(void *p, size_t size, bool nested, bool retired)
{
	size_t planned = retired ? arena_retired_block_bytes(p) : arena_block_bytes(p);
	bool replaying = preload_mode_now() == PRELOAD_REPLAY && !nested;
	void *q = NULL;

	if (!planned)
		arena_bad_pointer("realloc", p); /* freed already, or inside a block */
	if (size <= planned) {
		if (replaying && !retired)
			replay_consume(size);
		return p;
	}
	if (replaying)
		q = replay_alloc(size, 1, false);
	if (!q) {
		q = next_malloc(size);
		if (!q)
			return NULL; /* the old block stays valid, as realloc requires */
		if (replaying && replay_tracks_libc())
			replay_note_libc((int64_t)libc_usable(q));
	}
	memcpy(q, p, planned);
	if (!retired)
		pool_slots_arena_free(p);
	return q;
}

static void *realloc_libc(void *p, size_t size)
{
	size_t old;
	void *q;

	switch (preload_mode_now()) {
	case PRELOAD_RECORD: {
		uint64_t token = record_realloc_begin(p);
		q = next_realloc(p, size);
		record_realloc_done(token, p, q, size);
		return q;
	}
	case PRELOAD_REPLAY:
		q = replay_alloc(size, 1, false);
		if (!q && !replay_tracks_libc())
			return next_realloc(p, size); /* no plan: nothing to measure */
		old = libc_usable(p);
		if (q) {
			memcpy(q, p, old < size ? old : size);
			replay_note_libc(-(int64_t)old);
			next_free(p);
			return q;
		}
		q = next_realloc(p, size);
		if (q)
			replay_note_libc((int64_t)libc_usable(q) - (int64_t)old);
		return q;
	default:
		return next_realloc(p, size);
	}
}

void *route_realloc(void *p, size_t size)
{
	void *q;

	if (!p)
		return route_alloc(ALLOC_MALLOC, 1, size);
	if (size == 0) {
		/* glibc frees and returns NULL. */
		route_free(p);
		return NULL;
	}
	bool nested = guard_active();
	guard_enter();
	if (arena_owns(p))
		q = realloc_arena(p, size, nested, false);
	else if (arena_retired_owns(p))
		q = realloc_arena(p, size, nested, true);
	else
		q = realloc_libc(p, size);
	guard_leave();
	return q;
}

void *route_realloc_not_arena(void *p, size_t size)
{
	if (arena_retired_owns(p))
		return route_realloc(p, size);
	return next_realloc(p, size);
}

size_t route_usable_size(void *p)
{
	size_t n;

	if (!p)
		return 0;
	if (arena_retired_owns(p))
		return arena_retired_block_bytes(p); /* its words are only read now */
	if (!arena_owns(p))
		return next_usable_size(p);
	guard_enter();
	n = arena_block_bytes(p);
	guard_leave();
	return n;
}
