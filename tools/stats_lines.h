/* The statistics lines that the preload library appends at exit, one JSON
 * object per process image (MEMPLAN_STATS), read back by memplan record and
 * replay to say what the command's processes did. Only the keys memplan writes
 * are understood; a line that is not such an object is skipped. */
#pragma once

#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>
#include <sys/types.h>

#include "utf8.h"

#define STATS_MISS_KINDS 16
/* The sites a replay line names (the preload library writes 5 at most). */
#define STATS_MISSED_SITES 8

/* A call site that went to libc, by its key in the plan (as memplan show
 * --json gives it), and its misses: of every reason, and by reason as the
 * line names them (the first STATS_MISS_KINDS). */
struct stats_missed_site {
	uint64_t key;
	uint64_t misses;
	uint32_t reason_count;
	char reason_name[STATS_MISS_KINDS][24];
	uint64_t by_reason[STATS_MISS_KINDS];
};

struct stats_line {
	/* As the line has it: a long path is cut in the middle, its file name
	 * kept (utf8_json_cut), and fits whole here. */
	char exe[UTF8_JSON_STRING_MAX + 1];
	/* The plan file, as the process was given it (MEMPLAN_PLAN) made
	 * absolute, not resolved, and cut as exe is; "" if the line names none. */
	char plan[UTF8_JSON_STRING_MAX + 1];
	/* replay: the file name of argv[0] (its first 128 bytes), if it is not
	 * exe's; else "". */
	char argv0[256];
	uint64_t pid;
	uint64_t allocs, planned, hits, hit_bytes, arena_bytes;
	bool exe_in_plan;
	char match[16]; /* replay: how the image was found ("exact", "same_exe"), or "" */
	bool has_written, written; /* record: whether the plan was written */
	char error[256];	   /* record: why not */
	bool said;		   /* record: whether the process said why on stderr */
	bool sandboxed;		   /* the process sandboxed itself, or ran in a sandbox */
	bool plan_unreadable;	   /* replay: the process could not read the plan */
	uint32_t miss_count;
	char miss_name[STATS_MISS_KINDS][24];
	uint64_t miss[STATS_MISS_KINDS];
	/* replay: the sites that missed most, most first */
	uint32_t missed_site_count;
	struct stats_missed_site missed_sites[STATS_MISSED_SITES];
};

/* Calls each(line, ctx) for every statistics line of the file at path from byte
 * from on. Only a regular file is read (a pipe or a terminal would wait for
 * input). Returns the number of lines read, or -1 if the file cannot be read. */
int stats_lines_read(const char *path, off_t from,
		     void (*each)(const struct stats_line *line, void *ctx), void *ctx);

/* The same from a stream read to its end (check --stats -: standard input).
 * Returns the lines read, or -1 on a read error or out of memory. */
int stats_lines_read_stream(FILE *f, void (*each)(const struct stats_line *line, void *ctx),
			    void *ctx);

/* Parses one line into *out: a statistics object, or other bytes and then one
 * to the line's end (a command's output that did not end with a newline).
 * Returns false if it is neither. */
bool stats_line_parse(const char *text, struct stats_line *out);

/* Chooses the statistics file for a command memplan runs: the user's (made
 * absolute) with *from its current size, so that only the lines of this run
 * are read back; else a fresh temporary file (*temporary set: unlink it after)
 * in $TMPDIR, or in /tmp if $TMPDIR cannot hold it. Exports it as
 * MEMPLAN_STATS. Returns 0, or -1 after a message if the user's path is too
 * long, or if no temporary file can be made in either (then MEMPLAN_STATS is
 * not set). */
int stats_file_prepare(const char *user_path, char *path, size_t cap, off_t *from,
		       bool *temporary);

/* Removes a temporary statistics file stats_file_prepare made, and its
 * directory. */
void stats_file_remove(const char *path);
