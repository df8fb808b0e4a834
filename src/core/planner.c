/* The planner's driver (contract in planner.h).
 *
 * 1. One sweep over the blocks sorted by start gives the lower bound and cuts the
 *    timeline wherever nothing is live: each such part is planned on its own from
 *    offset 0, and the arena is the highest part.
 * 2. Every part gets event-order best fit and lowest offset first by area, whose
 *    cost does not grow with the overlapping pairs (planner_lowest.c), then big
 *    blocks apart and, when the pairs are few enough to enumerate quickly (and,
 *    under a time limit, soon enough), greedy by size with best fit; the
 *    smallest wins. This is all that runs with time_limit_s == 0.
 * 3. With time left, parts above the target (the lower bound, raised by the slack
 *    or to the capacity) are improved: lowest offset first in other orders, the
 *    fits that enumerate pairs where they fit the budget, then an exact
 *    branch-and-bound search (planner_search.c). Candidates are compared by (arena, fixed index), so
 *    the answer depends on the time limit only through what finished in time. */
#define _GNU_SOURCE
#include "planner.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "planner_greedy.h"
#include "planner_lowest.h"
#include "planner_search.h"

/* Above this many overlapping pairs the quick pass skips greedy by size with best
 * fit, which enumerates them: about a second of work on one core. Heuristics
 * that enumerate pairs run under a time limit only if P / PAIRS_PER_SECOND
 * seconds fit before the deadline. */
#define QUICK_PAIR_LIMIT 20000000ull
#define PAIRS_PER_SECOND 20000000.0

struct part {
	size_t first, m;      /* range in the start-sorted index array */
	struct plan_item *it; /* the items, sorted by start */
	uint64_t *off;	      /* best offsets so far */
	uint64_t arena_bytes; /* of off */
	uint64_t lower_bytes; /* peak load of the part */
	uint64_t pairs;	      /* overlapping pairs */
	bool lowest_done;     /* the quick pass ran lowest offset first by area */
};

struct event {
	uint64_t t;
	uint64_t size_bytes;
	int is_alloc; /* frees (0) sort first at equal times: lifetimes are half-open */
};

static int cmp_event(const void *pa, const void *pb)
{
	const struct event *a = pa, *b = pb;

	if (a->t != b->t)
		return a->t < b->t ? -1 : 1;
	return a->is_alloc - b->is_alloc;
}

/* planner_lower_bound by qsort, for times past what planner_events can tag. */
static int planner_lower_bound_sorted(const struct block *blocks, size_t n,
				      uint64_t *lower_bound_bytes)
{
	struct event *ev;
	size_t nev = 0;
	uint64_t live = 0, peak = 0;

	ev = malloc((2 * n + 1) * sizeof(*ev));
	if (!ev)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct block *b = &blocks[i];
		if (!b->size_bytes || b->t_end <= b->t_start)
			continue;
		ev[nev++] = (struct event){b->t_start, b->size_bytes, 1};
		if (b->t_end != BLOCK_T_INFINITY)
			ev[nev++] = (struct event){b->t_end, b->size_bytes, 0};
	}
	qsort(ev, nev, sizeof(*ev), cmp_event);
	for (size_t k = 0; k < nev; k++) {
		if (ev[k].is_alloc) {
			live += ev[k].size_bytes;
			if (live > peak)
				peak = live;
		} else {
			live -= ev[k].size_bytes;
		}
	}
	free(ev);
	*lower_bound_bytes = peak;
	return 0;
}

int planner_events(const struct block *blocks, size_t n, uint64_t **keys_out,
		   uint32_t **vals_out, size_t *count)
{
	uint64_t *keys = NULL;
	uint32_t *vals = NULL;
	size_t m = 0;
	int r = -ENOMEM;

	*keys_out = NULL;
	*vals_out = NULL;
	*count = 0;
	if (n >= UINT32_MAX)
		return r;
	keys = malloc((2 * n + 1) * sizeof(*keys));
	vals = malloc((2 * n + 1) * sizeof(*vals));
	if (!keys || !vals)
		goto fail;
	for (size_t i = 0; i < n; i++) {
		const struct block *b = &blocks[i];
		if (!b->size_bytes || b->t_end <= b->t_start)
			continue;
		if (b->t_start >> 63 || (b->t_end != BLOCK_T_INFINITY && b->t_end >> 63)) {
			r = -EINVAL; /* no room for the kind bit: not a recorded clock */
			goto fail;
		}
		keys[m] = b->t_start << 1 | 1;
		vals[m++] = (uint32_t)i;
		if (b->t_end != BLOCK_T_INFINITY) {
			keys[m] = b->t_end << 1;
			vals[m++] = (uint32_t)i;
		}
	}
	r = radix_sort_pairs(keys, vals, m);
	if (r)
		goto fail;
	*keys_out = keys;
	*vals_out = vals;
	*count = m;
	return 0;
fail:
	free(keys);
	free(vals);
	return r;
}

int planner_lower_bound(const struct block *blocks, size_t n, uint64_t *lower_bound_bytes)
{
	uint64_t *keys, live = 0, peak = 0;
	uint32_t *vals;
	size_t m;
	int r = planner_events(blocks, n, &keys, &vals, &m);

	if (r == -EINVAL)
		return planner_lower_bound_sorted(blocks, n, lower_bound_bytes);
	if (r)
		return r;
	for (size_t k = 0; k < m; k++) {
		if (keys[k] & 1) {
			live += blocks[vals[k]].size_bytes;
			if (live > peak)
				peak = live;
		} else {
			live -= blocks[vals[k]].size_bytes;
		}
	}
	free(keys);
	free(vals);
	*lower_bound_bytes = peak;
	return 0;
}

/* Peak load and overlapping pairs of one part: the items are sorted by start, so
 * only the ends need sorting, and a merge of the two is the sweep (frees first at
 * equal times). */
static int part_measure(struct part *p)
{
	uint64_t *ends = malloc(p->m * sizeof(*ends) + 1);
	uint32_t *who = malloc(p->m * sizeof(*who) + 1);
	uint64_t live = 0, peak = 0, count = 0, pairs = 0;
	int ret = -ENOMEM;

	if (!ends || !who)
		goto err_free;
	for (size_t i = 0; i < p->m; i++) {
		ends[i] = p->it[i].t_end;
		who[i] = (uint32_t)i;
	}
	ret = radix_sort_pairs(ends, who, p->m);
	if (ret)
		goto err_free;
	size_t f = 0;
	for (size_t i = 0; i < p->m; i++) {
		while (f < p->m && ends[f] <= p->it[i].t_start) {
			live -= p->it[who[f++]].size_bytes;
			count--;
		}
		pairs += count++;
		live += p->it[i].size_bytes;
		if (live > peak)
			peak = live;
	}
	p->lower_bytes = peak;
	p->pairs = pairs;
err_free:
	free(ends);
	free(who);
	return ret;
}

/* Keeps cand if it beats the part's best (ties keep the earlier candidate). */
static void part_offer(struct part *p, const uint64_t *cand, uint64_t arena_bytes)
{
	if (arena_bytes < p->arena_bytes) {
		memcpy(p->off, cand, p->m * sizeof(*cand));
		p->arena_bytes = arena_bytes;
	}
}

/* Big blocks apart: blocks of TIER_BIG_BYTES and more, when there are at most
 * TIER_BIG_MAX of them, packed on their own (greedy by size with best fit) at the
 * bottom of the part, and all the others above them by event-order best fit. On
 * a trace where many small blocks live long and a buffer grows by realloc,
 * event-order best fit fills every hole the buffer leaves with small blocks, so
 * each doubling has nowhere to go but the top (the sqlite3 benchmark: 8% above
 * the lower bound); apart, the big ones pack among themselves. O(m log m) plus
 * the big blocks' pairs. */
#define TIER_BIG_BYTES (UINT64_C(64) << 10)
#define TIER_BIG_MAX   4096u

static int part_tiers(struct part *p, uint64_t *cand)
{
	size_t big = 0, small = 0, m = p->m;
	uint64_t big_arena, small_arena, small_align = 1;
	int ret = -ENOMEM;

	for (size_t i = 0; i < m; i++)
		if (p->it[i].size_bytes >= TIER_BIG_BYTES)
			big++;
	if (!big || big == m || big > TIER_BIG_MAX)
		return 0;
	/* Each tier keeps the start order; index[] says where each item came from. */
	struct plan_item *items = malloc(m * sizeof(*items));
	uint32_t *index = malloc(m * sizeof(*index));
	uint32_t *order = malloc(big * sizeof(*order));
	uint64_t *off = malloc(m * sizeof(*off));
	if (!items || !index || !order || !off)
		goto out;
	for (size_t i = 0, b = 0; i < m; i++) {
		bool is_big = p->it[i].size_bytes >= TIER_BIG_BYTES;
		size_t at = is_big ? b++ : big + small++;
		items[at] = p->it[i];
		index[at] = (uint32_t)i;
		if (!is_big && p->it[i].align_bytes > small_align)
			small_align = p->it[i].align_bytes;
	}
	ret = greedy_make_order(items, big, GREEDY_BY_SIZE, order);
	if (!ret)
		ret = greedy_place(items, big, order, GREEDY_BEST_FIT, 0, off, &big_arena);
	if (!ret)
		ret = greedy_linear_scan(items + big, small, off + big, &small_arena);
	if (ret)
		goto out;
	/* The small tier starts where the big one ends, at an offset that keeps its
	 * alignments. */
	uint64_t base = (big_arena + small_align - 1) / small_align * small_align;
	for (size_t k = 0; k < m; k++)
		cand[index[k]] = k < big ? off[k] : base + off[k];
	part_offer(p, cand, base + small_arena);
out:
	free(items);
	free(index);
	free(order);
	free(off);
	return ret;
}

/* The quick pass: event-order best fit, then lowest offset first by area (both
 * O(m log m) whatever the overlap; the second is usually within a fraction of a
 * percent of the lower bound on recorded traces), then, while the part is above
 * its lower bound, big blocks apart and, when the overlapping pairs P are few
 * enough to enumerate in about a second, greedy by size with best fit
 * (O(P log P)). The lowest result wins; a part at or below target_bytes (or its
 * own lower bound) needs no more. With a deadline (not 0), each stops or is
 * skipped when it would not end before it, and big blocks apart, which is
 * cheap, goes before lowest offset first. */
static int part_quick(struct part *p, uint64_t *scratch, uint32_t *order, double deadline_s,
		      uint64_t target_bytes)
{
	uint64_t arena, done_bytes = target_bytes > p->lower_bytes ? target_bytes : p->lower_bytes;
	int ret;

	double scan_start_s = planner_now_s();
	ret = greedy_linear_scan(p->it, p->m, p->off, &p->arena_bytes);
	if (ret || p->arena_bytes <= done_bytes)
		return ret;
	double scan_s = planner_now_s() - scan_start_s;
	/* Big blocks apart costs about one more scan: only if that fits the deadline.
	 * Under a deadline it goes first, so that lowest offset first, if the
	 * deadline cuts it, leaves its result. */
	bool tiers_done = false;
	if (deadline_s > 0 && planner_now_s() + scan_s < deadline_s) {
		ret = part_tiers(p, scratch);
		if (ret || p->arena_bytes <= done_bytes)
			return ret;
		tiers_done = true;
	}
	ret = greedy_make_order(p->it, p->m, GREEDY_BY_AREA, order);
	if (!ret)
		ret = lowest_first_place(p->it, p->m, order, deadline_s, scratch, &arena);
	/* Cut by the deadline, or a bug in it (-EFAULT): the other results stand. */
	if (ret && ret != -ETIMEDOUT && ret != -EFAULT)
		return ret;
	if (!ret) {
		p->lowest_done = true;
		part_offer(p, scratch, arena);
	}
	if (!tiers_done && deadline_s <= 0 && p->arena_bytes > done_bytes) {
		ret = part_tiers(p, scratch);
		if (ret)
			return ret;
	}
	if (p->arena_bytes <= done_bytes || p->pairs > QUICK_PAIR_LIMIT)
		return 0;
	if (deadline_s > 0 && planner_now_s() + (double)p->pairs / PAIRS_PER_SECOND > deadline_s)
		return 0;
	ret = greedy_make_order(p->it, p->m, GREEDY_BY_SIZE, order);
	if (!ret)
		ret = greedy_place(p->it, p->m, order, GREEDY_BEST_FIT, 0, scratch, &arena);
	if (ret)
		return ret;
	part_offer(p, scratch, arena);
	return 0;
}

/* ---- improvement: fixed greedy variants, run on up to two threads ---- */

/* The candidates, most promising first (the deadline may cut the list short):
 * lowest offset first in every order, whose cost does not grow with the
 * overlapping pairs, then the fits that enumerate them. The first is the quick
 * pass's own, skipped when that ran. */
static const struct {
	enum greedy_order order;
	enum greedy_fit fit;
} variants[] = {
    {GREEDY_BY_AREA, GREEDY_LOWEST},	     {GREEDY_BY_CONFLICT, GREEDY_LOWEST},
    {GREEDY_BY_SIZE, GREEDY_LOWEST},	     {GREEDY_BY_LIFETIME, GREEDY_LOWEST},
    {GREEDY_BY_START, GREEDY_LOWEST},	     {GREEDY_BY_SIZE, GREEDY_BEST_FIT},
    {GREEDY_BY_AREA, GREEDY_BEST_FIT},	     {GREEDY_BY_CONFLICT, GREEDY_BEST_FIT},
    {GREEDY_BY_LIFETIME, GREEDY_BEST_FIT},   {GREEDY_BY_START, GREEDY_BEST_FIT},
    {GREEDY_BY_SIZE, GREEDY_FIRST_FIT},	     {GREEDY_BY_AREA, GREEDY_FIRST_FIT},
    {GREEDY_BY_CONFLICT, GREEDY_FIRST_FIT}, {GREEDY_BY_LIFETIME, GREEDY_FIRST_FIT},
};

#define VARIANT_COUNT (sizeof(variants) / sizeof(variants[0]))

struct variant_job {
	const struct part *p;
	double deadline_s;
	uint64_t target_bytes;
	atomic_int *stop;
	unsigned first, stride, count;
	uint64_t best_arena;
	unsigned best_index;
	uint64_t *best_off;
	int ret;
};

static void *variant_worker(void *arg)
{
	struct variant_job *job = arg;
	const struct part *p = job->p;
	uint32_t *order = malloc(p->m * sizeof(*order));
	uint64_t *off = malloc(p->m * sizeof(*off));

	job->best_arena = UINT64_MAX;
	job->best_index = UINT32_MAX;
	if (!order || !off) {
		job->ret = -ENOMEM;
		goto out;
	}
	for (unsigned v = job->first; v < job->count; v += job->stride) {
		enum greedy_fit fit = variants[v].fit;
		uint64_t arena;
		int ret;

		if (planner_now_s() > job->deadline_s || atomic_load(job->stop))
			break;
		if (v == 0 && p->lowest_done)
			continue;
		if (fit != GREEDY_LOWEST &&
		    planner_now_s() + (double)p->pairs / PAIRS_PER_SECOND > job->deadline_s)
			continue;
		ret = greedy_make_order(p->it, p->m, variants[v].order, order);
		if (!ret && fit == GREEDY_LOWEST)
			ret = lowest_first_place(p->it, p->m, order, job->deadline_s, off, &arena);
		else if (!ret)
			ret = greedy_place(p->it, p->m, order, fit, job->deadline_s, off, &arena);
		if (ret == -ETIMEDOUT)
			break;
		if (ret == -EFAULT)
			continue;
		if (ret) {
			job->ret = ret;
			break;
		}
		if (arena < job->best_arena) {
			job->best_arena = arena;
			job->best_index = v;
			memcpy(job->best_off, off, p->m * sizeof(*off));
		}
		if (arena <= job->target_bytes) {
			atomic_store(job->stop, 1);
			break;
		}
	}
out:
	free(order);
	free(off);
	return NULL;
}

static int part_variants(struct part *p, unsigned threads, double deadline_s, uint64_t target_bytes)
{
	struct variant_job jobs[2];
	atomic_int stop = 0;
	pthread_t tid[2];
	unsigned nj = threads >= 2 && p->m > 64 ? 2 : 1, started = 0;
	int ret = 0;

	for (unsigned j = 0; j < nj; j++) {
		jobs[j] = (struct variant_job){
		    p,	deadline_s,    target_bytes, &stop,	 j,
		    nj, VARIANT_COUNT, UINT64_MAX,   UINT32_MAX, malloc(p->m * sizeof(uint64_t)),
		    0};
		if (!jobs[j].best_off)
			ret = -ENOMEM;
	}
	if (ret)
		goto err_free;
	for (unsigned j = 1; j < nj; j++) {
		if (pthread_create(&tid[j], NULL, variant_worker, &jobs[j]))
			break;
		started = j;
	}
	/* A thread that failed to start leaves its variants to this one. */
	if (started + 1 < nj) {
		nj = 1;
		jobs[0].stride = 1;
	}
	variant_worker(&jobs[0]);
	for (unsigned j = 1; j <= started; j++)
		pthread_join(tid[j], NULL);
	for (unsigned j = 0; j < nj; j++)
		if (jobs[j].ret)
			ret = jobs[j].ret;
	/* Fixed tie-break: lowest arena, then lowest variant index. */
	for (unsigned j = 0; j < nj && !ret; j++) {
		struct variant_job *b = &jobs[j];
		if (b->best_index == UINT32_MAX)
			continue;
		int better = b->best_arena < p->arena_bytes;
		for (unsigned k = 0; k < nj; k++) {
			if (k != j && jobs[k].best_index != UINT32_MAX &&
			    (jobs[k].best_arena < b->best_arena ||
			     (jobs[k].best_arena == b->best_arena &&
			      jobs[k].best_index < b->best_index)))
				better = 0;
		}
		if (better)
			part_offer(p, b->best_off, b->best_arena);
	}
err_free:
	for (unsigned j = 0; j < (threads >= 2 && p->m > 64 ? 2u : 1u); j++)
		free(jobs[j].best_off);
	return ret;
}

static int validate_input(const struct block *blocks, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct block *b = &blocks[i];
		if (!b->align_bytes || (b->align_bytes & (b->align_bytes - 1)))
			return -EINVAL;
		if (b->size_bytes && b->t_end <= b->t_start)
			return -EINVAL;
	}
	return 0;
}

unsigned planner_threads(const struct planner_options *opt)
{
	long cpus;

	if (opt && opt->threads)
		return opt->threads;
	cpus = sysconf(_SC_NPROCESSORS_ONLN);
	return cpus > 1 ? (unsigned)cpus : 1;
}

int planner_solve(struct block *blocks, size_t n, const struct planner_options *opt,
		  struct planner_result *result)
{
	double t0 = planner_now_s();
	double limit_s = opt && opt->time_limit_s > 0 ? opt->time_limit_s : 0;
	double deadline_s = t0 + limit_s;
	uint64_t capacity = opt ? opt->capacity_bytes : 0;
	unsigned threads = planner_threads(opt);
	size_t *idx = NULL, nz = 0, nparts = 0;
	struct part *parts = NULL;
	uint64_t *scratch = NULL;
	uint32_t *order = NULL;
	uint64_t lower = 0, arena = 0;
	int ret;

	ret = validate_input(blocks, n);
	if (ret)
		return ret;
	if (n >= UINT32_MAX)
		return -ENOMEM;

	idx = malloc((n + 1) * sizeof(*idx));
	if (!idx) {
		ret = -ENOMEM;
		goto err_free;
	}
	{
		uint64_t *keys = malloc(n * sizeof(*keys) + 1);
		uint32_t *vals = malloc(n * sizeof(*vals) + 1);
		if (!keys || !vals) {
			free(keys);
			free(vals);
			ret = -ENOMEM;
			goto err_free;
		}
		for (size_t i = 0; i < n; i++) {
			/* A zero-size block conflicts with nothing; offset 0 is always aligned. */
			blocks[i].offset_bytes = 0;
			if (blocks[i].size_bytes) {
				keys[nz] = ~blocks[i].size_bytes;
				vals[nz++] = (uint32_t)i;
			}
		}
		/* By start, larger first at equal starts (which the event-order best fit
		 * prefers), then input order: two stable passes. */
		ret = radix_sort_pairs(keys, vals, nz);
		for (size_t k = 0; k < nz; k++)
			keys[k] = blocks[vals[k]].t_start;
		if (!ret)
			ret = radix_sort_pairs(keys, vals, nz);
		for (size_t k = 0; k < nz && !ret; k++)
			idx[k] = vals[k];
		free(keys);
		free(vals);
		if (ret)
			goto err_free;
	}

	/* Cut where nothing is live: the next start is at or after every end so far. */
	size_t cap_parts = 16;
	parts = calloc(cap_parts, sizeof(*parts));
	if (!parts) {
		ret = -ENOMEM;
		goto err_free;
	}
	for (size_t k = 0; k < nz;) {
		uint64_t max_end = blocks[idx[k]].t_end;
		size_t j = k + 1;
		while (j < nz && blocks[idx[j]].t_start < max_end) {
			if (blocks[idx[j]].t_end > max_end)
				max_end = blocks[idx[j]].t_end;
			j++;
		}
		if (nparts == cap_parts) {
			struct part *np = realloc(parts, 2 * cap_parts * sizeof(*np));
			if (!np) {
				ret = -ENOMEM;
				goto err_free;
			}
			memset(np + cap_parts, 0, cap_parts * sizeof(*np));
			parts = np;
			cap_parts *= 2;
		}
		parts[nparts].first = k;
		parts[nparts++].m = j - k;
		k = j;
	}

	size_t max_m = 0;
	for (size_t q = 0; q < nparts; q++) {
		struct part *p = &parts[q];
		p->it = malloc(p->m * sizeof(*p->it));
		p->off = malloc(p->m * sizeof(*p->off));
		if (!p->it || !p->off) {
			ret = -ENOMEM;
			goto err_free;
		}
		for (size_t i = 0; i < p->m; i++) {
			const struct block *b = &blocks[idx[p->first + i]];
			p->it[i] = (struct plan_item){b->size_bytes, b->t_start, b->t_end,
						      b->align_bytes, idx[p->first + i]};
		}
		ret = part_measure(p);
		if (ret)
			goto err_free;
		if (p->lower_bytes > lower)
			lower = p->lower_bytes;
		if (p->m > max_m)
			max_m = p->m;
	}
	scratch = malloc((max_m + 1) * sizeof(*scratch));
	order = malloc((max_m + 1) * sizeof(*order));
	if (!scratch || !order) {
		ret = -ENOMEM;
		goto err_free;
	}
	/* A part needs work only while it is above what the whole plan must reach. */
	uint64_t target = lower;
	if (opt && opt->slack > 0)
		target = (uint64_t)((double)lower * (1 + opt->slack));
	if (opt && opt->slack_bytes && lower + opt->slack_bytes > target)
		target = lower + opt->slack_bytes;
	if (capacity > target)
		target = capacity;
	uint64_t quick_arena = 0;
	for (size_t q = 0; q < nparts; q++) {
		ret = part_quick(&parts[q], scratch, order, limit_s > 0 ? deadline_s : 0, target);
		if (ret)
			goto err_free;
		if (parts[q].arena_bytes > quick_arena)
			quick_arena = parts[q].arena_bytes;
	}
	/* The quick pass of a big trace takes seconds: say where it ended. */
	if (opt && opt->progress)
		opt->progress(opt->progress_ctx, quick_arena, lower, planner_now_s() - t0);
	if (limit_s > 0) {
		for (size_t q = 0; q < nparts; q++) {
			struct part *p = &parts[q];
			if (p->arena_bytes <= target || planner_now_s() > deadline_s)
				continue;
			ret = part_variants(p, threads, deadline_s, target);
			if (ret)
				goto err_free;
			if (opt && opt->progress)
				opt->progress(opt->progress_ctx, p->arena_bytes, lower,
					      planner_now_s() - t0);
		}
		for (size_t q = 0; q < nparts; q++) {
			struct part *p = &parts[q];
			if (p->arena_bytes <= target || planner_now_s() > deadline_s)
				continue;
			struct search_params sp = {
			    .target_bytes = target > p->lower_bytes ? target : p->lower_bytes,
			    .deadline_s = deadline_s,
			    .threads = threads,
			    .progress = opt ? opt->progress : NULL,
			    .progress_ctx = opt ? opt->progress_ctx : NULL,
			    .lower_bound_bytes = lower,
			    .t0_s = t0,
			};
			ret = search_improve(p->it, p->m, &sp, p->off, &p->arena_bytes);
			if (ret)
				goto err_free;
		}
	}

	for (size_t q = 0; q < nparts; q++) {
		struct part *p = &parts[q];
		for (size_t i = 0; i < p->m; i++)
			blocks[idx[p->first + i]].offset_bytes = p->off[i];
		if (p->arena_bytes > arena)
			arena = p->arena_bytes;
	}
	if (result) {
		result->arena_bytes = arena;
		result->lower_bound_bytes = lower;
		result->elapsed_s = planner_now_s() - t0;
		result->proven_optimal = arena == lower;
	}
	ret = 0;

err_free:
	for (size_t q = 0; parts && q < nparts; q++) {
		free(parts[q].it);
		free(parts[q].off);
	}
	free(parts);
	free(idx);
	free(scratch);
	free(order);
	return ret;
}
