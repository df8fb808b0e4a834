/* Re-planning an image, see plan_builder.h. */
#include "plan_builder.h"

#include "checker.h"
#include "event_packer.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Regions packed at once, at most (plan_regions). */
#define REGION_THREADS_MAX 16u

/* Runs the planner on a copy of blocks and keeps its offsets if they pack smaller. */
static int improve(struct block *blocks, uint64_t n, const struct planner_options *opt,
		   uint64_t *arena_bytes)
{
	struct planner_result result;
	struct block *copy = malloc((n ? n : 1) * sizeof(*copy));
	int r;

	if (!copy)
		return -ENOMEM;
	memcpy(copy, blocks, n * sizeof(*copy));
	r = planner_solve(copy, (size_t)n, opt, &result);
	if (r == 0 && result.arena_bytes < *arena_bytes) {
		memcpy(blocks, copy, n * sizeof(*copy));
		*arena_bytes = result.arena_bytes;
	}
	free(copy);
	return r;
}

/* Packs blocks[0..n): the event packer (it is linear and gives the lower bound),
 * then, with opt, the planner proper; the smaller arena wins. Sets the record's
 * arena and lower bound. */
static int pack_blocks(struct block *blocks, uint64_t n, const struct planner_options *opt,
		       struct plan_image_record *rec)
{
	uint64_t arena_bytes, lower_bound_bytes;
	int r;

	r = event_packer_pack(blocks, (size_t)n, &arena_bytes, &lower_bound_bytes);
	if (r == 0 && arena_bytes > lower_bound_bytes && opt)
		r = improve(blocks, n, opt, &arena_bytes);
	if (r < 0)
		return r;
	rec->arena_bytes = arena_bytes;
	rec->lower_bound_bytes = lower_bound_bytes;
	return 0;
}

/* size_bytes rounded up to whole replay granules. */
static uint64_t granules_bytes(uint64_t size_bytes)
{
	return plan_granules_of(size_bytes) * PLAN_GRANULE_BYTES;
}

/* The block an entry (or allocation) takes: rounded to the replay granule, since
 * replay tracks occupancy per granule, and at least granule-aligned. An in-place
 * realloc takes no space (size 0 conflicts with nothing): its block's lifetime is
 * stretched over it instead, and it shares its block's offset. */
static struct block block_of(uint64_t size_bytes, uint64_t align_bytes, uint64_t t_start,
			     uint64_t t_end, bool in_place)
{
	if (in_place)
		return (struct block){0, t_start, t_end, 0, 1};
	return (struct block){
	    .size_bytes = granules_bytes(size_bytes),
	    .t_start = t_start,
	    .t_end = t_end,
	    .align_bytes = align_bytes > PLAN_GRANULE_BYTES ? align_bytes : PLAN_GRANULE_BYTES,
	};
}

/* Re-plans entries[0..n) in place (entry order). */
static int plan_entries(struct plan_entry *entries, uint64_t n, const struct planner_options *opt,
			struct plan_image_record *rec)
{
	struct block *blocks;
	int r;

	blocks = calloc(n ? n : 1, sizeof(*blocks));
	if (!blocks)
		return -ENOMEM;
	for (uint64_t i = 0; i < n; i++) {
		const struct plan_entry *e = &entries[i];
		blocks[i] = block_of(e->size_bytes, e->align_bytes, e->t_start, e->t_end,
				     e->in_place_of != 0);
	}
	r = pack_blocks(blocks, n, opt, rec);
	if (r == 0)
		for (uint64_t i = 0; i < n; i++)
			entries[i].offset_bytes =
			    entries[i].in_place_of ? blocks[entries[i].in_place_of - 1].offset_bytes
						   : blocks[i].offset_bytes;
	free(blocks);
	return r;
}

/* Union-find over sites, the lower index as root so that regions are numbered the
 * same way in every run. */
static uint32_t root_of(uint32_t *parent, uint32_t s)
{
	while (parent[s] != s) {
		parent[s] = parent[parent[s]];
		s = parent[s];
	}
	return s;
}

static void join(uint32_t *parent, uint32_t a, uint32_t b)
{
	a = root_of(parent, a);
	b = root_of(parent, b);
	if (a < b)
		parent[b] = a;
	else if (b < a)
		parent[a] = b;
}

/* The bytes an entry's block took in the plan being re-planned. */
struct span {
	uint64_t start, end;
	uint32_t site;
};

static int by_start(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	return (x->start > y->start) - (x->start < y->start);
}

/* Numbers the regions of entries[0..n): sites whose blocks shared bytes in the
 * plan, at any time, are in one region, and so on transitively (an in-place entry
 * is in its block's). In a plan with thread regions, each region found so lies in
 * one thread's. Sets region[i] for each entry and *count. */
static int number_regions(const struct plan_entry *entries, uint64_t n, uint32_t site_count,
			  uint32_t *region, uint32_t *count)
{
	uint32_t *parent = malloc((site_count ? site_count : 1) * sizeof(*parent));
	uint32_t *id = malloc((site_count ? site_count : 1) * sizeof(*id));
	struct span *spans = malloc((n ? n : 1) * sizeof(*spans));
	uint64_t m = 0;

	if (!parent || !id || !spans) {
		free(parent);
		free(id);
		free(spans);
		return -ENOMEM;
	}
	for (uint32_t s = 0; s < site_count; s++)
		parent[s] = s;
	for (uint64_t i = 0; i < n; i++) {
		const struct plan_entry *e = &entries[i];
		if (e->in_place_of)
			join(parent, e->site, entries[e->in_place_of - 1].site);
		else if (e->size_bytes)
			spans[m++] = (struct span){e->offset_bytes,
						   e->offset_bytes + granules_bytes(e->size_bytes),
						   e->site};
	}
	qsort(spans, (size_t)m, sizeof(*spans), by_start);
	for (uint64_t k = 1, end = m ? spans[0].end : 0; k < m; k++) {
		if (spans[k].start < end)
			join(parent, spans[k].site, spans[k - 1].site);
		if (spans[k].end > end)
			end = spans[k].end;
	}
	*count = 0;
	for (uint32_t s = 0; s < site_count; s++)
		id[s] = UINT32_MAX;
	for (uint32_t s = 0; s < site_count; s++) {
		uint32_t r = root_of(parent, s);
		if (id[r] == UINT32_MAX)
			id[r] = (*count)++;
	}
	for (uint64_t i = 0; i < n; i++)
		region[i] = id[root_of(parent, entries[i].site)];
	free(parent);
	free(id);
	free(spans);
	return 0;
}

/* Sets *least to the fewest bytes any packing of entries[0..n) can take, entry i
 * being in region[i] of count: the sum of each region's most bytes live at
 * once, since regions never share bytes (one region: the blocks' peak). */
static int least_arena(const struct plan_entry *entries, uint64_t n, const uint32_t *region,
		       uint32_t count, uint64_t *least)
{
	struct block *blocks = malloc((n ? n : 1) * sizeof(*blocks));
	uint64_t *live = NULL, *peak = NULL, *keys = NULL;
	uint32_t *vals = NULL;
	size_t m = 0;
	int r = blocks ? 0 : -ENOMEM;

	if (r == 0) {
		live = calloc(count ? count : 1, sizeof(*live));
		peak = calloc(count ? count : 1, sizeof(*peak));
		if (!live || !peak)
			r = -ENOMEM;
	}
	for (uint64_t i = 0; r == 0 && i < n; i++) {
		const struct plan_entry *e = &entries[i];
		blocks[i] = block_of(e->size_bytes, e->align_bytes, e->t_start, e->t_end,
				     e->in_place_of != 0);
	}
	if (r == 0)
		r = planner_events(blocks, (size_t)n, &keys, &vals, &m);
	if (r == 0) {
		for (size_t k = 0; k < m; k++) {
			const uint32_t g = region[vals[k]];
			const uint64_t bytes = blocks[vals[k]].size_bytes;
			live[g] = keys[k] & 1 ? live[g] + bytes : live[g] - bytes;
			if (live[g] > peak[g])
				peak[g] = live[g];
		}
		*least = 0;
		for (uint32_t g = 0; g < count; g++)
			*least += peak[g];
	}
	free(blocks);
	free(keys);
	free(vals);
	free(live);
	free(peak);
	return r;
}

/* One region to pack, in its own stretch of entries (region_jobs_run). */
struct region_job {
	struct plan_entry *entries;
	uint64_t count, align;
	struct planner_options opt;
	bool with_planner;		 /* else the event packer only */
	struct plan_image_record packed; /* its arena */
	int ret;
};

/* A region's entry count and index, to order the jobs by. */
struct region_size {
	uint64_t count;
	uint32_t region;
};

struct region_jobs {
	struct region_job *job;
	const struct region_size *order; /* the regions, most entries first */
	uint32_t count;
	_Atomic uint32_t next;
};

static void *region_worker(void *arg)
{
	struct region_jobs *jobs = arg;
	uint32_t k;

	while ((k = atomic_fetch_add(&jobs->next, 1)) < jobs->count) {
		struct region_job *j = &jobs->job[jobs->order[k].region];
		j->ret = plan_entries(j->entries, j->count, j->with_planner ? &j->opt : NULL,
				      &j->packed);
	}
	return NULL;
}

/* Packs the regions on up to `threads` threads (this one too), the biggest
 * first; one that cannot start leaves its share to the others. */
static void region_jobs_run(struct region_jobs *jobs, unsigned threads)
{
	pthread_t tid[REGION_THREADS_MAX];
	unsigned started = 0;

	if (threads > jobs->count)
		threads = jobs->count;
	if (threads > REGION_THREADS_MAX)
		threads = REGION_THREADS_MAX;
	while (started + 1 < threads &&
	       pthread_create(&tid[started], NULL, region_worker, jobs) == 0)
		started++;
	region_worker(jobs);
	for (unsigned t = 0; t < started; t++)
		pthread_join(tid[t], NULL);
}

/* Passes the regions' progress reports on, one at a time, from whichever
 * thread packs them. */
struct region_progress {
	pthread_mutex_t lock;
	const struct planner_options *outer;
};

static void relay_region_progress(void *ctx, uint64_t best_bytes, uint64_t lower_bound_bytes,
				  double elapsed_s)
{
	struct region_progress *rp = ctx;

	pthread_mutex_lock(&rp->lock);
	rp->outer->progress(rp->outer->progress_ctx, best_bytes, lower_bound_bytes, elapsed_s);
	pthread_mutex_unlock(&rp->lock);
}

static int by_count_desc(const void *a, const void *b)
{
	const struct region_size *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return (x->region > y->region) - (x->region < y->region);
}

/* Re-plans entries[0..n), entry i being in region[i] of count (number_regions),
 * region by region, each packed on its
 * own and laid after the previous one at a multiple of its largest alignment, so
 * that no two regions ever share bytes. Each region gets a share of the time
 * budget in proportion to its entries, and regions are packed side by side on
 * the planner's threads: a program's threads make as many regions, each
 * about as big, and the quick pass alone takes seconds on a few hundred
 * thousand blocks. */
static int plan_regions(struct plan_entry *entries, uint64_t n, const uint32_t *region,
			uint32_t count, const struct planner_options *opt,
			struct plan_image_record *rec)
{
	struct region_size *sizes = NULL;
	uint64_t *first = NULL, *order = NULL, *index = NULL, end = 0;
	struct plan_entry *sub = NULL;
	struct region_job *job = NULL;
	struct block *blocks = NULL;
	int r = 0;

	first = calloc((size_t)count + 1, sizeof(*first));
	order = malloc((n ? n : 1) * sizeof(*order));
	index = malloc((n ? n : 1) * sizeof(*index));
	sub = malloc((n ? n : 1) * sizeof(*sub));
	blocks = malloc((n ? n : 1) * sizeof(*blocks));
	job = calloc(count ? count : 1, sizeof(*job));
	sizes = malloc((count ? count : 1) * sizeof(*sizes));
	if (!first || !order || !index || !sub || !blocks || !job || !sizes) {
		r = -ENOMEM;
		goto out;
	}
	/* Entries grouped by region, in entry order within each (a counting sort). */
	for (uint64_t i = 0; i < n; i++)
		first[region[i] + 1]++;
	for (uint32_t g = 0; g < count; g++)
		first[g + 1] += first[g];
	for (uint64_t i = 0; i < n; i++)
		index[i] = first[region[i]]++; /* its place; first[g] moves to g's end */
	for (uint32_t g = count; g > 0; g--)
		first[g] = first[g - 1];
	first[0] = 0;
	for (uint64_t i = 0; i < n; i++)
		order[index[i]] = i;
	for (uint32_t g = 0; g < count; g++) {
		uint64_t lo = first[g], m = first[g + 1] - lo;
		struct region_job *j = &job[g];
		*j = (struct region_job){
		    .entries = sub + lo, .count = m, .align = PLAN_GRANULE_BYTES, .packed = *rec};
		for (uint64_t k = 0; k < m; k++) {
			struct plan_entry *e = &j->entries[k];
			*e = entries[order[lo + k]];
			if (e->in_place_of) /* its block is in the region: join() */
				e->in_place_of = index[e->in_place_of - 1] - lo + 1;
			if (e->align_bytes > j->align)
				j->align = e->align_bytes;
		}
		if (opt) {
			j->with_planner = true;
			j->opt = *opt;
			j->opt.time_limit_s = opt->time_limit_s * (double)m / (double)n;
		}
		sizes[g] = (struct region_size){m, g};
	}
	/* Side by side, a region's own planner gets one thread, and its progress
	 * reports go through one lock. */
	const unsigned threads = opt ? planner_threads(opt) : 1;
	struct region_progress progress = {PTHREAD_MUTEX_INITIALIZER, opt};
	for (uint32_t g = 0; threads > 1 && count > 1 && g < count; g++) {
		job[g].opt.threads = 1;
		if (opt->progress) {
			job[g].opt.progress = relay_region_progress;
			job[g].opt.progress_ctx = &progress;
		}
	}
	qsort(sizes, count, sizeof(*sizes), by_count_desc);
	struct region_jobs jobs = {.job = job, .order = sizes, .count = count};
	region_jobs_run(&jobs, count > 1 ? threads : 1);
	for (uint32_t g = 0; g < count && r == 0; g++) {
		const struct region_job *j = &job[g];
		r = j->ret;
		end = (end + j->align - 1) / j->align * j->align;
		for (uint64_t k = 0; r == 0 && k < j->count; k++)
			entries[order[first[g] + k]].offset_bytes =
			    end + j->entries[k].offset_bytes;
		end += j->packed.arena_bytes;
	}
	if (r < 0)
		goto out;
	for (uint64_t i = 0; i < n; i++)
		blocks[i] = block_of(entries[i].size_bytes, entries[i].align_bytes, entries[i].t_start,
				     entries[i].t_end, entries[i].in_place_of != 0);
	r = planner_lower_bound(blocks, (size_t)n, &rec->lower_bound_bytes);
	rec->arena_bytes = end;
out:
	free(first);
	free(order);
	free(index);
	free(sub);
	free(job);
	free(sizes);
	free(blocks);
	return r;
}

/* How far above the least arena the planner may stop (planner.h). */
static uint64_t slack_of(const struct planner_options *opt, uint64_t least)
{
	uint64_t by_share = opt && opt->slack > 0 ? (uint64_t)((double)least * opt->slack) : 0;
	uint64_t by_bytes = opt ? opt->slack_bytes : 0;

	return by_share > by_bytes ? by_share : by_bytes;
}

int plan_builder_replan(struct plan_image *image, const struct planner_options *opt,
			struct plan_entry **entries_out, struct plan_chunk **chunks_out)
{
	const uint64_t n = image->record.entry_count, p = image->record.chunk_count;
	const uint64_t lower_bound = image->record.lower_bound_bytes;
	struct plan_entry *entries;
	struct plan_chunk *chunks;
	int r;

	/* An in-place entry must continue a block of its own (not another
	 * continuation), as the builder makes them; the reader checked only bounds. */
	for (uint64_t i = 0; i < n; i++)
		if (image->entries[i].in_place_of &&
		    image->entries[image->entries[i].in_place_of - 1].in_place_of)
			return -EINVAL;

	/* Each chunk of a pool is packed as an entry of its site: a block of all its
	 * slots that lives from its start on. */
	entries = malloc((n + p ? n + p : 1) * sizeof(*entries));
	chunks = malloc((p ? p : 1) * sizeof(*chunks));
	if (!entries || !chunks) {
		free(entries);
		free(chunks);
		return -ENOMEM;
	}
	if (n)
		memcpy(entries, image->entries, n * sizeof(*entries));
	for (uint64_t k = 0; k < p; k++) {
		const struct plan_chunk *c = &image->chunks[k];
		const struct plan_pool *pool = &image->pools[c->pool];
		chunks[k] = *c;
		entries[n + k] = (struct plan_entry){
		    .site = pool->site,
		    .size_bytes = pool->slot_bytes * c->slot_count,
		    .offset_bytes = c->offset_bytes,
		    .t_start = c->t_start,
		    .t_end = PLAN_T_INFINITY,
		    .align_bytes = pool->align_bytes,
		};
	}
	/* A layout already where the planner would stop keeps its offsets: the
	 * quick pass alone takes a second or two on a few hundred thousand blocks. */
	const bool regions = image->record.flags & PLAN_IMAGE_THREAD_REGIONS;
	uint32_t *region = calloc(n + p ? n + p : 1, sizeof(*region)), count = 1;
	uint64_t least;
	r = region ? 0 : -ENOMEM;
	if (r == 0 && regions)
		r = number_regions(entries, n + p, image->record.site_count, region, &count);
	if (r == 0)
		r = least_arena(entries, n + p, region, count, &least);
	if (r == -EINVAL) { /* times no recording makes: planned as they come */
		r = 0;
		least = 0;
	}
	if (r == 0 && image->record.arena_bytes > least + slack_of(opt, least))
		r = regions ? plan_regions(entries, n + p, region, count, opt, &image->record)
			    : plan_entries(entries, n + p, opt, &image->record);
	free(region);
	if (r < 0) {
		free(entries);
		free(chunks);
		return r;
	}
	for (uint64_t k = 0; k < p; k++)
		chunks[k].offset_bytes = entries[n + k].offset_bytes;
	/* The most bytes the recorded run had live at once, folded blocks too: not
	 * what the entries and pools alone would say. */
	image->record.lower_bound_bytes = lower_bound;
	image->entries = entries;
	image->chunks = chunks;
	*entries_out = entries;
	*chunks_out = chunks;
	return 0;
}

int plan_builder_check(const struct plan_image *image, uint64_t *blocks_peak_bytes, char *why,
		       size_t why_len)
{
	const uint64_t n = image->record.entry_count, p = image->record.chunk_count;
	struct block *blocks = malloc((n + p ? n + p : 1) * sizeof(*blocks));
	int r;

	if (!blocks)
		return -ENOMEM;
	for (uint64_t i = 0; i < n; i++) {
		const struct plan_entry *e = &image->entries[i];
		blocks[i] = block_of(e->size_bytes, e->align_bytes, e->t_start, e->t_end,
				     e->in_place_of != 0);
		blocks[i].offset_bytes = e->offset_bytes;
	}
	for (uint64_t k = 0; k < p; k++) {
		const struct plan_chunk *c = &image->chunks[k];
		const struct plan_pool *pool = &image->pools[c->pool];
		blocks[n + k] = block_of(pool->slot_bytes * c->slot_count, pool->align_bytes,
					 c->t_start, PLAN_T_INFINITY, false);
		blocks[n + k].offset_bytes = c->offset_bytes;
	}
	r = planner_lower_bound(blocks, (size_t)(n + p), blocks_peak_bytes);
	if (r == 0)
		r = checker_validate(blocks, (size_t)(n + p), image->record.arena_bytes, why,
				     why_len);
	free(blocks);
	return r;
}
