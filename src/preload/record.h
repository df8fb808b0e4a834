/* Record mode: every allocation's call site, occurrence, size, alignment and
 * lifetime on a logical clock (one tick per allocation or free), and at the end a
 * planned image merged into the plan file.
 *
 * All functions expect the guard to be set by the caller, so that the bookkeeping
 * they do (the unwinder's, tables) goes to libc. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct record_module;

/* Prepares recording, through module (NULL if it could not be opened, why
 * saying why: record_module_open). Returns 0 or a negative errno (already
 * reported). */
int record_start(const struct record_module *module, const char *why);

/* A block p of size bytes and alignment align was just returned by libc. */
void record_alloc(void *p, size_t size, size_t align);

/* p is about to be returned to libc. */
void record_free(void *p);

/* realloc: ends the old block before libc sees it. Returns a token for
 * record_realloc_done. */
uint64_t record_realloc_begin(void *old);

/* realloc finished: new_p (may equal old) of size bytes, or NULL if libc failed,
 * in which case the old block lives on. */
void record_realloc_done(uint64_t token, void *old, void *new_p, size_t size);

/* Plans and writes this image's plan. Returns 0 or a negative errno (reported).
 * from_signal: do only what is safe after a fatal signal (no planner threads). */
int record_finish(bool from_signal);

/* Thread lifetimes, for the lanes (recording.h): the calling thread is about to
 * create the thread named lineage; the calling thread, made by memplan's
 * pthread_create, is about to end. With the guard set. */
void record_thread_created(uint64_t lineage);
void record_thread_ended(void);

/* fork hooks: hold the lock across fork. The child, an image of its own (it has
 * its identity already: image_identity_fork), starts a recording of its own and
 * returns true; false if it records nothing (not recording, or out of memory). */
void record_before_fork(void);
void record_after_fork_parent(void);
bool record_after_fork_child(void);
