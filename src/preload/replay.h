/* Replay mode: finds this image's plan, maps the arena, and serves each allocation
 * whose call site and occurrence match a plan entry at that entry's offset. Every
 * failure to match is normal: the caller falls back to libc, and the reason is
 * counted for the statistics line written at exit.
 *
 * All functions expect the guard to be set by the caller. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Loads the plan and maps the arena. Returns 0 if replay can go on (possibly with
 * no plan for this image, counted as such); 1 after reporting in one line a plan
 * file that cannot be read, replay then going on with no image, to count every
 * allocation as plan_unreadable; or a negative errno after reporting why the
 * arena cannot be set up; then the caller passes everything to libc. */
int replay_start(void);

/* Whether this process replays an image of the plan. Without one (a program
 * the recording did not run, or a plan that cannot be read) every allocation
 * goes to libc and is only counted: the shims do that themselves
 * (route_count_to_libc), at a counter's cost, not the router's. Changes only
 * at start-up and in a forked child, before it has threads. */
extern bool replay_has_image;

/* Counts one allocation of a process without an image: a no_plan miss, or a
 * plan_unreadable one. */
void replay_count_to_libc(void);

/* An arena block for a request of size bytes and alignment align (1: malloc's
 * default), or NULL: the caller uses libc. zero: clear the bytes (calloc).
 * Counts the call for the statistics, as a hit or as a miss. */
void *replay_alloc(size_t size, size_t align, bool zero);

/* replay_alloc's common case, whole: a hit, for a call from the exported
 * function whose return address and frame these are, when the site is the
 * calling thread's (or the process has one thread) and the site, its window and
 * the arena all say yes. Else NULL, with nothing done or counted: the caller
 * goes the whole way (route_alloc). Unlike the rest, called without the guard
 * (it sets it). For malloc (and realloc of NULL), calloc (zeroes the block) and
 * the aligned allocations. */
void *replay_express_malloc(size_t size, uintptr_t return_address, uintptr_t frame);
void *replay_express_calloc(size_t size, uintptr_t return_address, uintptr_t frame);
void *replay_express_aligned(size_t size, size_t align, uintptr_t return_address, uintptr_t frame);

/* The same for a realloc of the arena block p to size bytes (non-zero), as the
 * router does it: in place if it fits, else to the site's next planned block.
 * NULL, with nothing done, when that is not the whole story. Only outside
 * memplan (the guard clear): a nested realloc claims nothing. */
void *replay_express_realloc(void *p, size_t size, uintptr_t return_address, uintptr_t frame);

/* Consumes the next occurrence of the caller's site without serving it: a realloc
 * that stays in place still counts as an allocation (and a call), as it did when
 * recording. */
void replay_consume(size_t size);

/* Returns once no thread is reading the plan: a read that starts after
 * preload_seal sees the seal and reads nothing. */
void replay_wait_reads(void);

/* libc bytes, for the statistics: a libc block of usable size bytes came or went.
 * Only for an image with a plan (replay_tracks_libc): in one without, everything
 * goes to libc and measuring it would only slow the program down. */
bool replay_tracks_libc(void);
void replay_note_libc(int64_t bytes);

/* Appends the statistics line if one was asked for. Once. */
void replay_finish(void);

/* After fork, in the child, which has its own identity already: resets the locks
 * another thread may have held. If the plan has an image for the child, the child
 * replays that one from now on, in an arena of its own. Else it goes on with its
 * parent's image and arena (its statistics say "match": "parent"). Either way its
 * statistics start from zero and are its own to write. */
void replay_after_fork_child(void);
