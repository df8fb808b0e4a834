/* Strict replay in the raw form: MEMPLAN_STRICT=1, or MEMPLAN_MIN_HIT_RATE=PCT
 * (which implies it), make the command end with exit status 1, where it would
 * have ended with 0, when its plan could not be used (by any of its
 * processes: one that started while it was being rewritten), when no process of it
 * found its program in the plan, or when less than PCT percent of its
 * allocations were served from the arena; one line on stderr says which. A CI
 * job that runs its program under LD_PRELOAD then fails instead of passing on
 * libc, as with `memplan replay --strict`.
 *
 * The command is judged as a whole, by its first process (the one the user
 * started, through any exec): no other process's exit status changes, since a
 * script acts on its children's. It counts the statistics lines that the
 * command's processes appended to MEMPLAN_STATS (a regular file) since it
 * started; without them, only its own allocations. It marks itself for the
 * others by rewriting MEMPLAN_STRICT to 1:PID:OFFSET (its pid, and where this
 * run's lines start). */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* At start-up in replay mode, once replay has started (started) or failed to:
 * reads MEMPLAN_STRICT and MEMPLAN_MIN_HIT_RATE (a bad value is said in one
 * line and fails the command) and, in the first process of a strict command,
 * arranges for the exit status to be judged at exit. May allocate (setenv).
 * Not thread-safe: call from the constructor. */
void strict_start(bool started);

/* At replay's finish: this image found its executable in the plan (in_plan)
 * and was served hits of its allocs allocations from the arena. Does not
 * allocate; async-signal-safe. */
void strict_judge(bool in_plan, uint64_t hits, uint64_t allocs);

/* The status a process that ends with status should end with: 1 instead of 0
 * in the first process of a strict command that fails its check (said in one
 * line), else status. Called at exit and from _exit, which runs no exit
 * handlers. Does not allocate; async-signal-safe. */
int strict_exit_status(int status);
