/* What `memplan replay` says when the command has ended: one line with the share
 * of the command's allocations served from the arena, the arena, and for each
 * process image that had no plan or a poor one, why: a plan it could not
 * read (changed while the command ran), a plan for other arguments, another
 * build of its executable in the plan (or, for one without a build-id, an
 * image recorded at another path), no image of it at all, a forked child past
 * those the plan keeps, or few of its allocations served (and the main
 * reason); and the images counted only up to the sandbox they set themselves.
 * Read from the statistics lines the command's processes appended
 * (stats_lines.h). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* One process image's line, as the summary needs it. */
struct replay_image {
	char name[256];	 /* the executable's file name */
	char label[512]; /* what the summary calls it (image_label_name) */
	uint64_t allocs, hits, arena_bytes;
	bool in_plan, other_args;
	bool parent_image; /* a forked child the plan has no image of, served from its parent's */
	bool sandboxed;	   /* its figures end where it sandboxed itself */
	bool unreadable;   /* it could not read the plan (changed meanwhile), and ran on libc */
	char top_miss[24]; /* the reason most allocations went to libc, or "" */
	/* The call site that missed most for top_miss, by its key in the plan
	 * (none for a reason counted at no site: unknown_site), and its name
	 * once replay_summary_name_sites found it ("" until then). */
	bool has_top_site;
	uint64_t top_site_key;
	char top_site[256];
};

/* An executable the plan has images of, to tell another build of a program
 * from no image of it. */
struct replay_plan_exe {
	char *name; /* its file name, escaped (text_safe.h) */
	/* Recorded without a build-id (all its images): replay finds them by
	 * path alone, and path (escaped) is the first one's. */
	bool by_path;
	char *path;
};

struct replay_summary {
	struct replay_image *images;
	size_t count;
	uint64_t allocs, hits, arena_bytes;
	bool any_in_plan;
	size_t unreadable; /* images that could not read the plan */
	/* valgrind's launcher ran: the program it starts under a tool that keeps
	 * its own allocator (memcheck, massif...) is left to it, and writes no
	 * line. */
	bool under_valgrind;
};

/* Reads the statistics lines of path from byte from on into *out. Returns the
 * number of lines, or -1 if the file cannot be read back (not a regular file),
 * or -ENOMEM. May allocate: free with replay_summary_free. */
int replay_summary_read(const char *path, off_t from, struct replay_summary *out);

void replay_summary_free(struct replay_summary *s);

/* Whether any image of s is served under poor_pct percent and names a call
 * site that missed: one for replay_summary_name_sites to name. */
bool replay_summary_has_sites(const struct replay_summary *s, double poor_pct);

/* Names, from the validated plan buf, the call site that missed most of each
 * image served under poor_pct percent (its first functions), for the summary
 * line. May allocate. */
void replay_summary_name_sites(struct replay_summary *s, const void *buf, double poor_pct);

/* Writes the summary line to out. exes are the executables the plan has
 * images of, each name once; an image served less than poor_pct percent is
 * named as poorly served. */
void replay_summary_print(FILE *out, const struct replay_summary *s,
			  const struct replay_plan_exe *exes, size_t exe_count, double poor_pct);

/* The executable of exes named as the first image of s that found no image of
 * its program in the plan: another build of it (a rebuilt or upgraded
 * program), or, by_path, one recorded at another path. NULL if there is
 * none. */
const struct replay_plan_exe *replay_summary_other_build(const struct replay_summary *s,
							 const struct replay_plan_exe *exes,
							 size_t exe_count);

/* The share of s's allocations served from the arena, in percent (100 for no
 * allocations). */
double replay_summary_share(const struct replay_summary *s);

/* That share as the summary line writes it: "100%", "0%", else one decimal
 * rounded down ("89.9%" for 89.96%: under 90 reads under 90). */
void replay_summary_share_text(const struct replay_summary *s, char *out, size_t cap);
