/* Start-up and shutdown of the preload library: reads the environment, decides
 * the mode, and makes sure every way out of the process (exit, return from main,
 * _exit, exec, fatal signals) finishes the recording or writes the replay stats.
 *
 * Environment: MEMPLAN_MODE (record | replay | off), MEMPLAN_PLAN (the plan file),
 * MEMPLAN_DEPTH (record: frames per call site), MEMPLAN_STATS (replay: JSON Lines
 * file), MEMPLAN_PREFAULT=1 (replay: touch the arena up front), MEMPLAN_PLAN_SECONDS
 * (record: planner budget per image), MEMPLAN_MAX_ALLOCS (record: allocations
 * recorded at most), MEMPLAN_STRICT and MEMPLAN_MIN_HIT_RATE (replay: strict.h),
 * MEMPLAN_LOCK_SECONDS (record: how long to wait for another
 * process's merge into the plan file, 10 by default), MEMPLAN_RECORD_ID (set for
 * child processes).
 * In secure-execution mode (AT_SECURE) all of it is ignored. */
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "image_identity.h"

enum preload_mode {
	PRELOAD_OFF = 0, /* pass through; still route arena pointers by address */
	PRELOAD_RECORD,
	PRELOAD_REPLAY,
};

struct preload_config {
	unsigned depth;
	bool prefault;
	double plan_seconds;
	bool plan_seconds_given; /* MEMPLAN_PLAN_SECONDS was set */
	uint64_t max_allocs;	/* record: allocations recorded at most */
	unsigned lock_wait_ms; /* record: for the plan file's lock */
	uint64_t record_id;
	char plan_path[4096];
	char stats_path[4096];
	bool stats_no_create; /* MEMPLAN_STATS_NO_CREATE=1: the command's own file */
	struct image_identity image;
};

/* Read on every allocation; written at start-up, at finish and after fork. */
extern _Atomic int preload_mode;
extern struct preload_config preload_config;

static inline enum preload_mode preload_mode_now(void)
{
	return (enum preload_mode)atomic_load_explicit(&preload_mode, memory_order_relaxed);
}

/* Finishes the current mode once: record writes its plan, replay its stats; then
 * the mode drops to PRELOAD_OFF. from_signal: called from a fatal-signal handler.
 * Safe to call from several threads and paths: only the first call does work. */
void preload_finish(bool from_signal);

/* The program is about to restrict its own system calls or files (a seccomp
 * filter or strict mode, a Landlock ruleset, a chroot: sandbox_shims.c).
 * Finishes the current mode now, while files can still be written (record
 * writes this process's plan, replay its statistics, which then say
 * "sandboxed"), and from then on memplan opens no file: replay serves on from
 * what it has read, a recording stops. strict: seccomp's strict mode, which
 * leaves no system call but read, write and exit: replay stops serving too,
 * and everything goes to libc. Sealed stays sealed, in forked children too. */
void preload_seal(bool strict);
bool preload_is_sealed(void);

/* Whether err, from writing a plan or statistics file, is a sandbox's refusal:
 * the process runs under a seccomp filter (which answers ENOSYS or EPERM)
 * that it was started in, as man-db starts its helpers. Such a process is not
 * recorded, and writes no statistics, without a word. A file's own
 * permissions answer EACCES, which is always said. Opens /proc/self/status. */
bool preload_sandbox_refused(int err);
