/* Turns a recording into a planned image: groups the recorded allocations by call
 * site (occurrence k of a site is its k-th allocation in time), runs the planner,
 * and produces the sites and entries tables of the plan file. Also re-plans an
 * existing image with other planner options. Pure: no global state. */
#pragma once

#include <stdint.h>

#include "plan_file.h"
#include "planner.h"

/* One allocation as the recorder saw it, in the order allocations happened. */
struct recorded_alloc {
	uint32_t site; /* index into the image's sites */
	uint32_t align_bytes;
	uint64_t size_bytes;
	uint64_t t_start;
	uint64_t t_end;	     /* PLAN_T_INFINITY if never freed */
	uint64_t realloc_of; /* index of the allocation this realloc replaced, or
				RECORDED_NOT_REALLOC */
};

#define RECORDED_NOT_REALLOC UINT64_MAX

/* On input image->sites[0..site_count) hold each site's key and frames (their
 * entry ranges are ignored); allocs are in allocation order. On success, *sites_out
 * and *entries_out are new malloc'ed tables that image now points to, and the
 * record's entry_count, arena_bytes and lower_bound_bytes are set.
 * Returns 0, -EINVAL (an alloc names a site out of range, or has a bad lifetime or
 * alignment), -ENOMEM. May allocate. */
int plan_builder_build(struct plan_image *image, const struct recorded_alloc *allocs,
		       uint64_t alloc_count, const struct planner_options *opt,
		       struct plan_site **sites_out, struct plan_entry **entries_out);

/* Planning: the event packer (event_packer.h) always, then the planner within
 * opt->time_limit_s when the trace is small enough for that budget (build) or
 * always (replan); the smaller arena wins. opt may be NULL: the packer only. */

/* Re-plans image's entries: on success *entries_out is a new malloc'ed copy with new
 * offsets that image now points to, and arena_bytes and lower_bound_bytes are set.
 * Returns 0, -EINVAL, -ENOMEM. May allocate. */
int plan_builder_replan(struct plan_image *image, const struct planner_options *opt,
			struct plan_entry **entries_out);
