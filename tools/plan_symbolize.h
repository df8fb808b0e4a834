/* Storing symbols in a plan: what `memplan record` does once the recorded
 * command has ended, while the binaries it ran are still there, so that the
 * plan stays readable (and comparable, site_identity.h) after they are rebuilt
 * or gone; the layouts it re-planned then go into the same write. */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* Debug information is read for at most this long per plan; the frames left
 * then get their ELF symbol names only. Well above what the biggest recordings
 * measured need (docs/usage.md), and below the time a process of the command that
 * still runs waits to merge its image (PLAN_STORE_LOCK_WAIT_MS). */
#define PLAN_SYMBOLIZE_BUDGET_S 5.0

struct plan_replan;
struct symbolizer;

/* Symbolises every frame of every image of the plan file at path that has no
 * symbols yet, if the file is still the recording record_id's, and rewrites it
 * atomically with the symbols and their strings (appended to each image's
 * string table), under the plan store's lock. sym: the symbolizer to use (NULL:
 * one of its own). Once the symbols are found, replan_done(ctx) (may be NULL)
 * gives the layouts re-planned meanwhile (plan_replan.h; NULL: none), and
 * each image takes the smaller layout found for it in the same write: images
 * merged since the re-planning read the file keep theirs. Returns 0 (also when
 * the file is another recording's, or has nothing to add), or a negative errno
 * with a one-line reason in why. May allocate. */
int plan_symbolize_file(const char *path, uint64_t record_id, struct symbolizer *sym,
			const struct plan_replan *(*replan_done)(void *ctx), void *ctx, char *why,
			size_t why_len);
