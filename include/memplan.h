/**
 * @file memplan.h
 * The public interface of memplan.
 *
 * memplan is used without code changes: a program runs under
 * `LD_PRELOAD=libmemplan.so` (or `memplan record` / `memplan replay`). The preload
 * library exports only the libc allocation, exec and _exit names it interposes.
 * This header documents the environment contract and the plan file constants that
 * programs and scripts may rely on.
 */
#ifndef MEMPLAN_H
#define MEMPLAN_H

/** The plan file format version this release reads and writes. */
#define MEMPLAN_PLAN_FORMAT_VERSION 4

/** Environment variable: `record`, `replay` or `off`. */
#define MEMPLAN_ENV_MODE "MEMPLAN_MODE"
/** Environment variable: the plan file to write (record) or read (replay). */
#define MEMPLAN_ENV_PLAN "MEMPLAN_PLAN"
/** Environment variable: frames per call site when recording (1 to 64). */
#define MEMPLAN_ENV_DEPTH "MEMPLAN_DEPTH"
/** Environment variable: replay statistics file (JSON Lines, appended at exit). */
#define MEMPLAN_ENV_STATS "MEMPLAN_STATS"
/** Environment variable: `1` to populate the whole arena at start-up. */
#define MEMPLAN_ENV_PREFAULT "MEMPLAN_PREFAULT"
/** Environment variable: planner time budget per image when recording, seconds. */
#define MEMPLAN_ENV_PLAN_SECONDS "MEMPLAN_PLAN_SECONDS"
/** Environment variable: allocations recorded at most per process image, 1 to
 *  2^40 (default: no limit); later ones are not planned. */
#define MEMPLAN_ENV_MAX_ALLOCS "MEMPLAN_MAX_ALLOCS"
/** Environment variable: how long a recording process waits for another's merge
 *  into the plan file, whole seconds from 0 to 3600 (default 10). */
#define MEMPLAN_ENV_LOCK_SECONDS "MEMPLAN_LOCK_SECONDS"
/** Environment variable: `1` makes a replayed command end with status 1 instead
 *  of 0 when its plan could not be used or no process found its program in it. */
#define MEMPLAN_ENV_STRICT "MEMPLAN_STRICT"
/** Environment variable: the least share of allocations, in percent, that a
 *  replayed command must have served from the arena (implies strict). */
#define MEMPLAN_ENV_MIN_HIT_RATE "MEMPLAN_MIN_HIT_RATE"

#endif /* MEMPLAN_H */
