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
struct found_image;

/* The symbols found for the images of a plan as it was read, without its
 * lock: each image's tables, and what tells the image. */
struct plan_symbols {
	struct found_image *images;
	uint32_t count;
};

/* Symbolises every frame of every image of the plan file at path that has no
 * symbols yet, if it is still the recording record_id's (else finds none),
 * with sym; without the plan store's lock, so that the symbolizer's debug
 * information can be given back before the planner runs. Fills *out (free it
 * with plan_symbols_free, also on failure). Returns 0, or a negative errno
 * with a one-line reason in why. May allocate. */
int plan_symbols_find(const char *path, uint64_t record_id, struct symbolizer *sym,
		      struct plan_symbols *out, char *why, size_t why_len);

void plan_symbols_free(struct plan_symbols *s);

/* Rewrites the plan file at path, if it is still the recording record_id's,
 * atomically and under the plan store's lock, with the symbols found (found,
 * may be NULL) for each image that has none, their strings appended to the
 * image's string table; an image merged since they were found is symbolised
 * now. With replan (may be NULL), each image also takes the smaller layout
 * found for it (plan_replan.h) in the same write: images merged since replan
 * read the file keep theirs. Returns 0 (also when the file is another
 * recording's, or has nothing to add), or a negative errno with a one-line
 * reason in why. May allocate. */
int plan_symbolize_file(const char *path, uint64_t record_id, const struct plan_symbols *found,
			const struct plan_replan *replan, char *why, size_t why_len);
