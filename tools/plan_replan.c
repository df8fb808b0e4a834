/* Re-planning a plan file's images within one budget, see plan_replan.h. */
#define _GNU_SOURCE
#include "plan_replan.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plan_builder.h"
#include "plan_summary.h"
#include "planner.h"
#include "text_safe.h"

/* An image's share of the budget is in proportion to its blocks, plus this many:
 * a small image still gets time for the exact search, which only small ones
 * can use. */
#define SHARE_EXTRA_BLOCKS 10000.0

/* Under a budget the planner always gets at least this long: 0 would mean no
 * deadline at all (planner.h). */
#define MIN_SHARE_S 1e-3

struct replan_result {
	/* Which process image it is for. */
	uint64_t exe_key, args_key, entry_count;
	uint32_t pid, fork_ordinal, chunk_count;
	/* Its smaller layout, if one was found. */
	uint64_t arena_bytes;
	struct plan_entry *entries;
	struct plan_chunk *chunks;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static bool same_image(const struct replan_result *res, const struct plan_image_record *rec)
{
	return res->exe_key == rec->exe_key && res->args_key == rec->args_key &&
	       res->entry_count == rec->entry_count && res->pid == rec->pid &&
	       res->fork_ordinal == rec->fork_ordinal && res->chunk_count == rec->chunk_count;
}

/* Passes the planner's progress on, with the image it is about. */
struct progress_relay {
	const struct replan_options *opt;
	uint32_t image, image_count;
	double t0_s;
};

static void relay_progress(void *ctx, uint64_t best_bytes, uint64_t lower_bound_bytes,
			   double elapsed_s)
{
	const struct progress_relay *relay = ctx;

	(void)elapsed_s; /* the image's; the whole run's is what is shown */
	relay->opt->progress(relay->opt->progress_ctx, relay->image, relay->image_count,
			     best_bytes, lower_bound_bytes, now_s() - relay->t0_s);
}

static double weight(const struct plan_image_record *rec)
{
	return (double)rec->entry_count + (double)rec->chunk_count + SHARE_EXTRA_BLOCKS;
}

/* Re-plans one image (decoded entries in im->entries) within limit_s; keeps the
 * new layout in res if it is smaller and valid. */
static int replan_image(struct plan_image *im, const struct planner_options *popt,
			struct replan_result *res, struct replan_summary *sum, char *why,
			size_t why_len)
{
	const uint64_t before_bytes = im->record.arena_bytes;
	struct plan_image replanned = *im;
	struct plan_entry *entries = NULL;
	struct plan_chunk *chunks = NULL;
	uint64_t peak = 0;
	char check_why[256];
	int r;

	r = plan_builder_replan(&replanned, popt, &entries, &chunks);
	if (r < 0) {
		snprintf(why, why_len, "cannot re-plan: %s", strerror(-r));
		return r;
	}
	if (replanned.record.arena_bytes < before_bytes) {
		r = plan_builder_check(&replanned, &peak, check_why, sizeof(check_why));
		if (r < 0) {
			free(entries);
			free(chunks);
			snprintf(why, why_len, "internal error, the new plan is invalid: %s",
				 r == -EINVAL ? check_why : strerror(-r));
			return r;
		}
		res->arena_bytes = replanned.record.arena_bytes;
		res->entries = entries;
		res->chunks = chunks;
		sum->improved++;
	} else {
		free(entries);
		free(chunks);
		/* For the figure: the old layout is the recording's to answer for. */
		r = plan_builder_check(im, &peak, check_why, sizeof(check_why));
		if (r == -ENOMEM) {
			snprintf(why, why_len, "out of memory");
			return r;
		}
	}
	sum->arena_bytes += res->entries ? res->arena_bytes : before_bytes;
	sum->blocks_peak_bytes += peak;
	return 0;
}

int plan_replan_run(struct plan_replan *r, const void *buf, const struct replan_options *opt,
		    struct replan_summary *sum, char *why, size_t why_len)
{
	const double t0 = now_s();
	const uint32_t n = plan_file_header(buf)->image_count;
	double weight_left = 0;
	int ret = 0;

	memset(sum, 0, sizeof(*sum));
	r->count = n;
	r->results = calloc(n ? n : 1, sizeof(*r->results));
	if (!r->results) {
		snprintf(why, why_len, "out of memory");
		return -ENOMEM;
	}
	sum->images = n;
	for (uint32_t i = 0; i < n; i++) {
		struct plan_image im;
		plan_file_image(buf, i, &im);
		weight_left += weight(&im.record);
	}
	for (uint32_t i = 0; i < n && ret == 0; i++) {
		struct replan_result *res = &r->results[i];
		struct plan_entry *decoded;
		struct plan_image im;

		plan_file_image(buf, i, &im);
		*res = (struct replan_result){
		    .exe_key = im.record.exe_key,
		    .args_key = im.record.args_key,
		    .entry_count = im.record.entry_count,
		    .pid = im.record.pid,
		    .fork_ordinal = im.record.fork_ordinal,
		    .chunk_count = im.record.chunk_count,
		};
		sum->allocations += plan_summary_figures(&im).allocations;
		sum->arena_before_bytes += im.record.arena_bytes;
		sum->lower_bound_bytes += im.record.lower_bound_bytes;

		/* Time an image does not use goes to the ones after it. */
		double share_s = 0;
		if (opt->budget_s > 0) {
			double left_s = opt->budget_s - (now_s() - t0);
			share_s = left_s * weight(&im.record) / weight_left;
			if (share_s < MIN_SHARE_S)
				share_s = MIN_SHARE_S;
		}
		weight_left -= weight(&im.record);
		struct progress_relay relay = {opt, i, n, t0};
		struct planner_options popt = {
		    .time_limit_s = share_s,
		    .slack = opt->slack,
		    .slack_bytes = opt->slack_bytes,
		    .threads = opt->threads,
		    .progress = opt->progress ? relay_progress : NULL,
		    .progress_ctx = &relay,
		};
		if (opt->progress)
			opt->progress(opt->progress_ctx, i, n, im.record.arena_bytes,
				      im.record.lower_bound_bytes, now_s() - t0);
		ret = plan_image_entries(&im, &decoded);
		if (ret < 0) {
			snprintf(why, why_len, "out of memory");
			break;
		}
		im.entries = decoded;
		char image_why[200];
		ret = replan_image(&im, &popt, res, sum, image_why, sizeof(image_why));
		if (ret < 0) {
			const char *path = im.strings + im.record.exe_path_offset;
			char exe[256];
			size_t at = 0;
			text_safe_append(exe, sizeof(exe), &at, path, strlen(path));
			snprintf(why, why_len, "image %u (%s): %s", i, exe, image_why);
		}
		free(decoded);
	}
	sum->elapsed_s = now_s() - t0;
	return ret;
}

bool plan_replan_apply(const struct plan_replan *r, struct plan_image *image)
{
	for (uint32_t i = 0; i < r->count; i++) {
		const struct replan_result *res = &r->results[i];
		if (!res->entries || !same_image(res, &image->record))
			continue;
		if (res->arena_bytes >= image->record.arena_bytes)
			return false;
		image->entries = res->entries;
		image->chunks = res->chunks;
		image->record.arena_bytes = res->arena_bytes;
		return true;
	}
	return false;
}

void plan_replan_free(struct plan_replan *r)
{
	for (uint32_t i = 0; r->results && i < r->count; i++) {
		free(r->results[i].entries);
		free(r->results[i].chunks);
	}
	free(r->results);
	r->results = NULL;
	r->count = 0;
}
