/* Exact branch-and-bound improvement for one part (see planner_search.h).
 *
 * The search answers a decision question: is there a plan no higher than cap? It
 * explores only canonical plans, as MiniMalloc does: blocks are placed in
 * non-decreasing (offset, static rank) order, each at its lowest feasible offset
 * (the top of the placed blocks it overlaps in time). Pruning:
 *  - section inference: in each time section (between consecutive event times),
 *    the unplaced bytes must fit between the section's floor and cap, where the
 *    floor is the highest placed top there, raised to the lowest offset any
 *    unplaced block of the section could take, and to the current offset;
 *  - dominance: a block is never placed at or above the lowest top any unplaced
 *    block could reach, since that block would fit entirely below it;
 *  - decomposition: when no unplaced block crosses a section boundary, the two
 *    sides are independent and are solved one after the other.
 * The search is restarted with doubling node limits over a few static rankings
 * (a round robin, so that one unlucky ranking does not eat the budget).
 *
 * Optimisation on top: one thread asks for the target (usually the lower bound),
 * the other bisects between the target and the best height known, with a node
 * budget per probe that grows each time the bisection closes. Each thread's run is deterministic
 * given its budget; the answer is the lower of the two, ties going to the first thread. */
#define _GNU_SOURCE
#include "planner_search.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define NO_OFFSET UINT64_MAX

/* Beyond these the per-node cost (O(m) ordering, O(sections) checks) makes the
 * search pointless within seconds, and the tables get large. */
#define SEARCH_MAX_ITEMS 2500
#define SEARCH_MAX_PAIRS 4000000ull

/* Rankings in each round robin (MiniMalloc's three). */
#define SEARCH_RANKINGS 3

enum search_status { FOUND, NOT_FOUND, ABORTED };

/* Static rankings, keys larger first: T = peak load over the lifetime, A = area,
 * W = width (lifetime); ties go to the earlier block in the input. */
static const char *const ranking_keys[SEARCH_RANKINGS] = {"TAW", "WAT", "TWA"};

/* Orders items a and b under a ranking given each item's peak load. */
static int rank_cmp(const struct plan_item *it, const uint64_t *peak, int ranking, uint32_t a,
		    uint32_t b)
{
	const struct plan_item *x = &it[a], *y = &it[b];

	for (const char *k = ranking_keys[ranking]; *k; k++) {
		unsigned __int128 u = 0, v = 0;
		switch (*k) {
		case 'T':
			u = peak[a];
			v = peak[b];
			break;
		case 'A':
			u = (unsigned __int128)x->size_bytes * (x->t_end - x->t_start);
			v = (unsigned __int128)y->size_bytes * (y->t_end - y->t_start);
			break;
		case 'W':
			u = x->t_end - x->t_start;
			v = y->t_end - y->t_start;
			break;
		}
		if (u != v)
			return u > v ? -1 : 1;
	}
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return a < b ? -1 : a > b;
}

/* Read-only tables shared by the threads. */
struct search_tables {
	const struct plan_item *it;
	uint32_t m, nsec;
	uint32_t *sec_lo, *sec_hi; /* item i spans sections [sec_lo, sec_hi) */
	uint32_t *ov_start, *ov;   /* CSR: items overlapping item i in time */
	uint32_t *mem_start, *mem; /* CSR: items alive in section s */
	uint64_t *sec_total;	   /* bytes alive in section s */
	uint32_t *cuts0;	   /* items crossing boundary s|s+1 */
	uint64_t *peak;		   /* peak load over each item's lifetime */
	uint64_t gran;		   /* every canonical height is a multiple of it */
};

struct undo {
	uint32_t idx;
	uint64_t val;
};

/* One thread's search state. */
struct search_state {
	const struct search_tables *t;
	uint32_t *rank; /* static rank, re-ranked inside decomposed groups */
	int ranking;
	uint64_t cap;
	uint64_t *off, *minoff, *floor, *total, *sol, *peak;
	uint32_t *cuts, *stamp;
	uint32_t stamp_now;
	struct undo *ulog;
	size_t ulog_len, ulog_cap;
	uint32_t *pool; /* bump stack for per-level orderings */
	size_t pool_used, pool_cap;
	uint32_t *affected;
	int64_t nodes_left;
	uint64_t nodes;
	double deadline_s;
	atomic_int *stop;
	int aborted;
};

static uint64_t align_up(uint64_t x, uint64_t align)
{
	uint64_t r = x & (align - 1);

	if (!r)
		return x;
	return x > UINT64_MAX - (align - r) ? UINT64_MAX : x + (align - r);
}

static uint64_t gcd_u64(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t r = a % b;
		a = b;
		b = r;
	}
	return a;
}

static int log_push(struct search_state *s, uint32_t idx, uint64_t val)
{
	if (s->ulog_len == s->ulog_cap) {
		size_t cap = s->ulog_cap ? 2 * s->ulog_cap : 4096;
		struct undo *n = realloc(s->ulog, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		s->ulog = n;
		s->ulog_cap = cap;
	}
	s->ulog[s->ulog_len].idx = idx;
	s->ulog[s->ulog_len++].val = val;
	return 0;
}

/* Undo entries: idx < m is a min offset, idx >= m a section floor. */
static void undo_to(struct search_state *s, size_t mark)
{
	uint32_t m = s->t->m;

	while (s->ulog_len > mark) {
		struct undo *u = &s->ulog[--s->ulog_len];
		if (u->idx < m)
			s->minoff[u->idx] = u->val;
		else
			s->floor[u->idx - m] = u->val;
	}
}

/* Places b at its min offset and propagates; returns the undo mark, or -1 on ENOMEM.
 * Sets *hatless if no unplaced block overlaps b (nothing can ever sit on it). */
static long place(struct search_state *s, uint32_t b, int *hatless)
{
	const struct search_tables *t = s->t;
	uint64_t top = s->off[b] + t->it[b].size_bytes;
	size_t mark = s->ulog_len;
	size_t naff = 0;

	*hatless = 1;

	if (++s->stamp_now == 0) {
		memset(s->stamp, 0, t->nsec * sizeof(*s->stamp));
		s->stamp_now = 1;
	}
	for (uint32_t k = t->ov_start[b]; k < t->ov_start[b + 1]; k++) {
		uint32_t o = t->ov[k];
		if (s->off[o] != NO_OFFSET)
			continue;
		*hatless = 0;
		if (s->minoff[o] >= top)
			continue;
		if (log_push(s, o, s->minoff[o]))
			return -1;
		s->minoff[o] = align_up(top, t->it[o].align_bytes);
		for (uint32_t q = t->sec_lo[o]; q < t->sec_hi[o]; q++) {
			/* A floor already at or above the new min offset cannot rise. */
			if (s->floor[q] < s->minoff[o] && s->stamp[q] != s->stamp_now) {
				s->stamp[q] = s->stamp_now;
				s->affected[naff++] = q;
			}
		}
	}
	for (uint32_t q = t->sec_lo[b]; q < t->sec_hi[b]; q++) {
		if (s->floor[q] < top) {
			if (log_push(s, t->m + q, s->floor[q]))
				return -1;
			s->floor[q] = top;
		}
		s->total[q] -= t->it[b].size_bytes;
	}
	/* No unplaced block of a section can go below its lowest min offset. */
	for (size_t a = 0; a < naff; a++) {
		uint32_t q = s->affected[a];
		uint64_t lo = UINT64_MAX;
		for (uint32_t k = t->mem_start[q]; k < t->mem_start[q + 1]; k++) {
			uint32_t o = t->mem[k];
			if (s->off[o] == NO_OFFSET && s->minoff[o] < lo) {
				lo = s->minoff[o];
				if (lo <= s->floor[q])
					break;
			}
		}
		if (lo != UINT64_MAX && s->floor[q] < lo) {
			if (log_push(s, t->m + q, s->floor[q]))
				return -1;
			s->floor[q] = lo;
		}
	}
	return (long)mark;
}

static void unplace(struct search_state *s, uint32_t b, size_t mark)
{
	const struct search_tables *t = s->t;

	undo_to(s, mark);
	for (uint32_t q = t->sec_lo[b]; q < t->sec_hi[b]; q++)
		s->total[q] += t->it[b].size_bytes;
	s->off[b] = NO_OFFSET;
}

static int check_sections(const struct search_state *s, uint32_t slo, uint32_t shi, uint64_t offset)
{
	for (uint32_t q = slo; q < shi; q++) {
		uint64_t f = s->floor[q] > offset ? s->floor[q] : offset;
		if (f > s->cap || s->total[q] > s->cap - f)
			return 0;
	}
	return 1;
}

static int order_less(const struct search_state *s, uint32_t a, uint32_t b)
{
	if (s->minoff[a] != s->minoff[b])
		return s->minoff[a] < s->minoff[b];
	return s->rank[a] < s->rank[b];
}

static uint32_t *pool_alloc(struct search_state *s, size_t n)
{
	if (s->pool_used + n > s->pool_cap)
		return NULL;
	uint32_t *p = s->pool + s->pool_used;
	s->pool_used += n;
	return p;
}

static enum search_status search(struct search_state *s, const uint32_t *parent, size_t nparent,
				 uint32_t slo, uint32_t shi, uint64_t min_offset,
				 uint32_t min_rank);

struct rerank_ctx {
	const struct search_state *s;
	const uint64_t *peak;
};

/* The group's own ranking: as the static one, but the peak load (T) is of the
 * bytes still unplaced, which is what matters inside the group. */
static int cmp_group(const void *pa, const void *pb, void *vctx)
{
	const struct rerank_ctx *c = vctx;

	return rank_cmp(c->s->t->it, c->peak, c->s->ranking, *(const uint32_t *)pa,
			*(const uint32_t *)pb);
}

static void rerank(struct search_state *s, uint32_t *items, size_t n, uint32_t *old_rank)
{
	const struct search_tables *t = s->t;
	struct rerank_ctx c = {s, s->peak};

	for (size_t k = 0; k < n; k++) {
		uint32_t i = items[k];
		uint64_t p = 0;
		for (uint32_t q = t->sec_lo[i]; q < t->sec_hi[i]; q++)
			if (s->total[q] > p)
				p = s->total[q];
		s->peak[i] = p;
	}
	qsort_r(items, n, sizeof(*items), cmp_group, &c);
	for (size_t k = 0; k < n; k++) {
		old_rank[k] = s->rank[items[k]];
		s->rank[items[k]] = (uint32_t)k;
	}
}

/* After b is placed at min_offset: lowers the cuts of the boundaries b crosses and
 * searches on. If that leaves boundaries with no unplaced block across them, the
 * groups between them are independent and are solved one by one, each from offset
 * 0 under its own ranking. The cuts stay lowered for the whole subtree (so that
 * they reach zero as blocks are placed) and are restored on return. */
static enum search_status decompose(struct search_state *s, const uint32_t *items, size_t n,
				    uint32_t slo, uint32_t shi, uint32_t b, uint64_t min_offset)
{
	const struct search_tables *t = s->t;
	uint32_t cut_buf[64], ncut = 0;
	uint32_t *cutpoints = cut_buf;
	enum search_status st = FOUND;

	for (uint32_t q = t->sec_lo[b]; q + 1 < t->sec_hi[b]; q++) {
		if (--s->cuts[q] == 0 && q + 1 > slo && q + 1 < shi && ncut < 64)
			cutpoints[ncut++] = q + 1;
	}
	if (!ncut) {
		/* Still one group: search on with the cuts of b's sections lowered, so
		 * that a later placement can bring them to zero. */
		st = search(s, items, n, slo, shi, min_offset, s->rank[b]);
	} else {
		size_t saved = s->pool_used;
		uint32_t lo = slo;
		for (uint32_t c = 0; c <= ncut && st == FOUND; c++) {
			uint32_t hi = c < ncut ? cutpoints[c] : shi;
			uint32_t *sub = pool_alloc(s, n);
			size_t ns = 0;
			if (!sub) {
				s->aborted = -ENOMEM;
				st = ABORTED;
				break;
			}
			for (size_t k = 0; k < n; k++) {
				uint32_t o = items[k];
				if (s->off[o] == NO_OFFSET && t->sec_lo[o] < hi &&
				    lo < t->sec_hi[o])
					sub[ns++] = o;
			}
			if (ns) {
				uint32_t *old_rank = pool_alloc(s, ns);
				if (!old_rank) {
					s->aborted = -ENOMEM;
					st = ABORTED;
					break;
				}
				rerank(s, sub, ns, old_rank);
				st = search(s, sub, ns, lo, hi, 0, 0);
				for (size_t k = 0; k < ns; k++)
					s->rank[sub[k]] = old_rank[k];
			}
			s->pool_used = saved;
			lo = hi;
		}
	}
	for (uint32_t q = t->sec_lo[b]; q + 1 < t->sec_hi[b]; q++)
		s->cuts[q]++;
	return st;
}

static enum search_status search(struct search_state *s, const uint32_t *parent, size_t nparent,
				 uint32_t slo, uint32_t shi, uint64_t min_offset, uint32_t min_rank)
{
	const struct search_tables *t = s->t;
	size_t saved = s->pool_used;
	uint32_t *ord;
	size_t n = 0;
	enum search_status st = NOT_FOUND;

	if (s->nodes_left-- <= 0)
		return ABORTED;
	s->nodes++;
	if (!(s->nodes & 255) &&
	    (planner_now_s() > s->deadline_s || (s->stop && atomic_load(s->stop)))) {
		s->nodes_left = 0;
		return ABORTED;
	}
	ord = pool_alloc(s, nparent);
	if (!ord) {
		s->aborted = -ENOMEM;
		return ABORTED;
	}
	/* The parent's order is nearly right: only overlapped blocks moved up. */
	for (size_t k = 0; k < nparent; k++) {
		uint32_t b = parent[k];
		if (s->off[b] != NO_OFFSET)
			continue;
		size_t j = n++;
		while (j > 0 && order_less(s, b, ord[j - 1])) {
			ord[j] = ord[j - 1];
			j--;
		}
		ord[j] = b;
	}
	if (!n) {
		s->pool_used = saved;
		return FOUND;
	}
	uint64_t min_height = UINT64_MAX;
	for (size_t k = 0; k < n; k++) {
		uint64_t h = s->minoff[ord[k]] + t->it[ord[k]].size_bytes;
		if (h < min_height)
			min_height = h;
	}
	/* Whatever is placed next at x, every section still needs x + its unplaced
	 * bytes (placements only go up), so x is bounded by the fullest section. */
	uint64_t max_total = 0;
	for (uint32_t q = slo; q < shi; q++)
		if (s->total[q] > max_total)
			max_total = s->total[q];
	uint64_t max_offset = max_total > s->cap ? 0 : s->cap - max_total;
	for (size_t k = 0; k < n; k++) {
		uint32_t b = ord[k];
		uint64_t offset = s->minoff[b];
		if (offset >= min_height || offset > max_offset)
			break; /* dominated (some block would fit entirely below), or no room */
		if (offset < min_offset || (offset == min_offset && s->rank[b] < min_rank))
			continue; /* not canonical */
		if (offset > s->cap || t->it[b].size_bytes > s->cap - offset)
			continue;
		int hatless;
		s->off[b] = offset;
		long mark = place(s, b, &hatless);
		if (mark < 0) {
			s->off[b] = NO_OFFSET;
			s->aborted = -ENOMEM;
			st = ABORTED;
			break;
		}
		enum search_status r = NOT_FOUND;
		if (check_sections(s, slo, shi, offset))
			r = decompose(s, ord, n, slo, shi, b, offset);
		unplace(s, b, (size_t)mark);
		if (r == FOUND)
			s->sol[b] = offset;
		if (r != NOT_FOUND) {
			st = r;
			break;
		}
		/* Nothing will ever rest on b, so placing it later cannot help the others:
		 * the failure below does not depend on when b goes in. */
		if (hatless)
			break;
	}
	s->pool_used = saved;
	return st;
}

/* ---- tables ---- */

static int cmp_u64(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;

	return a < b ? -1 : a > b;
}

static uint32_t time_index(const uint64_t *times, uint32_t nt, uint64_t x)
{
	uint32_t lo = 0, hi = nt;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (times[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

struct rank_ctx {
	const struct plan_item *it;
	const uint64_t *peak;
	int ranking;
};

static int cmp_rank(const void *pa, const void *pb, void *vctx)
{
	const struct rank_ctx *c = vctx;

	return rank_cmp(c->it, c->peak, c->ranking, *(const uint32_t *)pa, *(const uint32_t *)pb);
}

static void tables_free(struct search_tables *t)
{
	free(t->sec_lo);
	free(t->sec_hi);
	free(t->ov_start);
	free(t->ov);
	free(t->mem_start);
	free(t->mem);
	free(t->sec_total);
	free(t->cuts0);
	free(t->peak);
	memset(t, 0, sizeof(*t));
}

static int tables_build(struct search_tables *t, const struct plan_item *it, size_t m)
{
	uint64_t *times = NULL, *peak = NULL;
	uint32_t nt = 0;
	int ret = -ENOMEM;

	memset(t, 0, sizeof(*t));
	t->it = it;
	t->m = (uint32_t)m;
	times = malloc(2 * m * sizeof(*times));
	if (!times)
		goto err;
	for (size_t i = 0; i < m; i++) {
		times[nt++] = it[i].t_start;
		times[nt++] = it[i].t_end;
	}
	qsort(times, nt, sizeof(*times), cmp_u64);
	uint32_t u = 0;
	for (uint32_t i = 0; i < nt; i++)
		if (!u || times[u - 1] != times[i])
			times[u++] = times[i];
	nt = u;
	t->nsec = nt;

	t->sec_lo = malloc(m * sizeof(uint32_t));
	t->sec_hi = malloc(m * sizeof(uint32_t));
	t->sec_total = calloc(t->nsec + 1, sizeof(uint64_t));
	t->mem_start = calloc(t->nsec + 2, sizeof(uint32_t));
	t->cuts0 = calloc(t->nsec + 1, sizeof(uint32_t));
	t->ov_start = calloc(m + 1, sizeof(uint32_t));
	peak = calloc(m, sizeof(*peak));
	if (!t->sec_lo || !t->sec_hi || !t->sec_total || !t->mem_start || !t->cuts0 ||
	    !t->ov_start || !peak)
		goto err;
	uint64_t g = 0;
	size_t nmem = 0;
	for (uint32_t i = 0; i < m; i++) {
		/* Section k is the interval between the k-th and (k+1)-th distinct event
		 * times. MiniMalloc keeps only the moments before each end; on the
		 * challenging suite these finer sections did as well or better. */
		t->sec_lo[i] = time_index(times, nt, it[i].t_start + 1);
		t->sec_hi[i] = time_index(times, nt, it[i].t_end) + 1;
		for (uint32_t q = t->sec_lo[i]; q < t->sec_hi[i]; q++) {
			t->sec_total[q] += it[i].size_bytes;
			t->mem_start[q + 1]++;
		}
		for (uint32_t q = t->sec_lo[i]; q + 1 < t->sec_hi[i]; q++)
			t->cuts0[q]++;
		nmem += t->sec_hi[i] - t->sec_lo[i];
		g = gcd_u64(g, it[i].size_bytes);
	}
	/* Offsets are tops of other blocks rounded up to an alignment: an alignment
	 * that divides g, or that g divides, keeps them multiples of g. */
	for (uint32_t i = 0; i < m && g > 1; i++) {
		uint64_t a = it[i].align_bytes;
		if (a % g && g % a)
			g = gcd_u64(g, a);
	}
	t->gran = g ? g : 1;
	for (uint32_t q = 0; q < t->nsec; q++)
		t->mem_start[q + 1] += t->mem_start[q];
	t->mem = malloc((nmem + 1) * sizeof(uint32_t));
	if (!t->mem)
		goto err;
	{
		uint32_t *fill = malloc((t->nsec + 1) * sizeof(uint32_t));
		if (!fill)
			goto err;
		memcpy(fill, t->mem_start, (t->nsec + 1) * sizeof(uint32_t));
		for (uint32_t i = 0; i < m; i++)
			for (uint32_t q = t->sec_lo[i]; q < t->sec_hi[i]; q++)
				t->mem[fill[q]++] = i;
		free(fill);
	}
	for (uint32_t i = 0; i < m; i++)
		for (uint32_t q = t->sec_lo[i]; q < t->sec_hi[i]; q++)
			if (t->sec_total[q] > peak[i])
				peak[i] = t->sec_total[q];

	/* Overlaps: items are sorted by start, so j > i overlaps i iff start_j < end_i. */
	size_t nov = 0;
	for (uint32_t i = 0; i < m; i++)
		for (uint32_t j = i + 1; j < m && it[j].t_start < it[i].t_end; j++)
			if (it[i].t_start < it[j].t_end) {
				t->ov_start[i + 1]++;
				t->ov_start[j + 1]++;
				nov += 2;
			}
	for (uint32_t i = 0; i < m; i++)
		t->ov_start[i + 1] += t->ov_start[i];
	t->ov = malloc((nov + 1) * sizeof(uint32_t));
	if (!t->ov)
		goto err;
	{
		uint32_t *fill = malloc((size_t)(m + 1) * sizeof(uint32_t));
		if (!fill)
			goto err;
		memcpy(fill, t->ov_start, (size_t)(m + 1) * sizeof(uint32_t));
		for (uint32_t i = 0; i < m; i++)
			for (uint32_t j = i + 1; j < m && it[j].t_start < it[i].t_end; j++)
				if (it[i].t_start < it[j].t_end) {
					t->ov[fill[i]++] = j;
					t->ov[fill[j]++] = i;
				}
		free(fill);
	}

	t->peak = peak;
	peak = NULL;
	ret = 0;
err:
	free(times);
	free(peak);
	if (ret)
		tables_free(t);
	return ret;
}

/* ---- per-thread state and decision probes ---- */

static void state_free(struct search_state *s)
{
	free(s->off);
	free(s->minoff);
	free(s->floor);
	free(s->total);
	free(s->sol);
	free(s->cuts);
	free(s->stamp);
	free(s->ulog);
	free(s->pool);
	free(s->affected);
	free(s->rank);
	free(s->peak);
	memset(s, 0, sizeof(*s));
}

static int state_init(struct search_state *s, const struct search_tables *t)
{
	size_t m = t->m;

	memset(s, 0, sizeof(*s));
	s->t = t;
	s->off = malloc(m * sizeof(uint64_t));
	s->minoff = malloc(m * sizeof(uint64_t));
	s->sol = malloc(m * sizeof(uint64_t));
	s->floor = malloc((t->nsec + 1) * sizeof(uint64_t));
	s->total = malloc((t->nsec + 1) * sizeof(uint64_t));
	s->cuts = malloc((t->nsec + 1) * sizeof(uint32_t));
	s->stamp = calloc(t->nsec + 1, sizeof(uint32_t));
	s->affected = malloc((t->nsec + 1) * sizeof(uint32_t));
	s->rank = malloc(m * sizeof(uint32_t));
	s->peak = malloc(m * sizeof(uint64_t));
	s->pool_cap = 2 * m * m + 4 * m + 16;
	s->pool = malloc(s->pool_cap * sizeof(uint32_t));
	if (!s->off || !s->minoff || !s->sol || !s->floor || !s->total || !s->cuts || !s->stamp ||
	    !s->affected || !s->pool || !s->rank || !s->peak) {
		state_free(s);
		return -ENOMEM;
	}
	return 0;
}

/* One depth-first search at cap with a node limit and one ranking. */
static enum search_status run_once(struct search_state *s, uint64_t cap, int ranking,
				   int64_t node_limit)
{
	const struct search_tables *t = s->t;
	uint32_t *items;

	for (uint32_t i = 0; i < t->m; i++) {
		s->off[i] = NO_OFFSET;
		s->minoff[i] = 0;
	}
	memset(s->floor, 0, t->nsec * sizeof(uint64_t));
	memcpy(s->total, t->sec_total, t->nsec * sizeof(uint64_t));
	memcpy(s->cuts, t->cuts0, t->nsec * sizeof(uint32_t));
	s->ulog_len = 0;
	s->pool_used = 0;
	{
		struct rank_ctx c = {t->it, t->peak, ranking};
		uint32_t *perm = s->pool;
		for (uint32_t i = 0; i < t->m; i++)
			perm[i] = i;
		qsort_r(perm, t->m, sizeof(*perm), cmp_rank, &c);
		for (uint32_t i = 0; i < t->m; i++)
			s->rank[perm[i]] = i;
	}
	s->ranking = ranking;
	s->cap = cap;
	s->nodes_left = node_limit;
	items = pool_alloc(s, t->m);
	for (uint32_t i = 0; i < t->m; i++)
		items[i] = i;
	/* The whole part must fit before any search. */
	for (uint32_t q = 0; q < t->nsec; q++)
		if (t->sec_total[q] > cap)
			return NOT_FOUND;
	return search(s, items, t->m, 0, t->nsec, 0, 0);
}

/* Round robin over the rankings with doubling node limits, up to max_limit per
 * run. Returns FOUND (plan in *sol), NOT_FOUND (proven: no canonical plan fits, so
 * no plan fits) or ABORTED (limits or deadline). */
static enum search_status probe(struct search_state *s, uint64_t cap, int64_t max_limit,
				const uint64_t **sol)
{
	int64_t limit = s->t->m;

	for (;;) {
		if (limit < INT64_MAX / 2)
			limit *= 2;
		if (limit > max_limit)
			return ABORTED;
		for (int r = 0; r < SEARCH_RANKINGS; r++) {
			enum search_status res = run_once(s, cap, r, limit);
			*sol = s->sol;
			if (res != ABORTED || s->aborted || planner_now_s() > s->deadline_s ||
			    (s->stop && atomic_load(s->stop)))
				return res;
		}
	}
}

static uint64_t plan_height(const struct plan_item *it, size_t m, const uint64_t *off)
{
	uint64_t h = 0;

	for (size_t i = 0; i < m; i++)
		if (off[i] + it[i].size_bytes > h)
			h = off[i] + it[i].size_bytes;
	return h;
}

struct search_job {
	const struct search_tables *t;
	const struct search_params *params;
	atomic_int *stop;
	int bisect;	     /* 0: ask for the target; 1: bisect above it */
	uint64_t start_best; /* height of the incoming plan */
	uint64_t best;	     /* best height found by this job (UINT64_MAX: none) */
	uint64_t *best_off;
	int ret;
};

static void *search_worker(void *arg)
{
	struct search_job *job = arg;
	const struct search_tables *t = job->t;
	uint64_t target = job->params->target_bytes, g = t->gran;
	struct search_state st[1];
	const uint64_t *sol = NULL;

	job->best = UINT64_MAX;
	job->ret = state_init(st, t);
	if (job->ret)
		return NULL;
	st->deadline_s = job->params->deadline_s;
	st->stop = job->stop;

	if (!job->bisect) {
		enum search_status res = probe(st, target, INT64_MAX, &sol);
		if (res == FOUND) {
			job->best = plan_height(t->it, t->m, sol);
			memcpy(job->best_off, sol, t->m * sizeof(uint64_t));
			atomic_store(job->stop, 1);
		}
		goto out;
	}

	uint64_t best = job->start_best;
	int64_t budget = 64 * (int64_t)t->m;
	/* Round the target up to the granularity: heights are multiples of it. */
	uint64_t floor_cap = (target + g - 1) / g * g;
	/* Whether floor_cap was proven infeasible (else it is the target's). */
	bool floor_proven = false;
	uint64_t lo = floor_cap + g;
	while (planner_now_s() < job->params->deadline_s && !atomic_load(job->stop) &&
	       !st->aborted) {
		if (best <= floor_cap || best < g)
			break;
		/* Every height below best proven infeasible: best is optimal, and
		 * widening the budget would only spin to the deadline (a plan of
		 * two aligned blocks once took the whole time limit). */
		if (floor_proven && floor_cap + g >= best) {
			atomic_store(job->stop, 1);
			break;
		}
		uint64_t hi = best - g;
		if (lo > hi) {
			/* Bisection closed under this budget: widen it and start over. */
			if (budget < INT64_MAX / 4)
				budget *= 4;
			lo = floor_cap + g;
			continue;
		}
		uint64_t mid = lo + (hi - lo) / 2 / g * g;
		enum search_status res = probe(st, mid, budget, &sol);
		if (res == FOUND) {
			best = plan_height(t->it, t->m, sol);
			job->best = best;
			memcpy(job->best_off, sol, t->m * sizeof(uint64_t));
			if (best <= target)
				atomic_store(job->stop, 1);
		} else {
			/* Proven infeasible at mid: so is everything below it. */
			if (res == NOT_FOUND) {
				floor_cap = mid;
				floor_proven = true;
			}
			lo = mid + g;
		}
		if (job->params->progress && job->best != UINT64_MAX)
			job->params->progress(job->params->progress_ctx, job->best,
					      job->params->lower_bound_bytes,
					      planner_now_s() - job->params->t0_s);
	}
out:
	job->ret = st->aborted < 0 ? st->aborted : 0;
	state_free(st);
	return NULL;
}

int search_improve(const struct plan_item *it, size_t m, const struct search_params *params,
		   uint64_t *off, uint64_t *arena_bytes)
{
	struct search_tables t;
	struct search_job jobs[2];
	atomic_int stop = 0;
	pthread_t tid;
	int ret, threaded = 0;

	if (m < 2 || m > SEARCH_MAX_ITEMS || *arena_bytes <= params->target_bytes)
		return 0;
	/* Count pairs first: the tables hold every overlapping pair twice. */
	uint64_t pairs = 0;
	for (size_t i = 0; i < m && pairs <= SEARCH_MAX_PAIRS; i++)
		for (size_t j = i + 1; j < m && it[j].t_start < it[i].t_end; j++)
			pairs++;
	if (pairs > SEARCH_MAX_PAIRS)
		return 0;
	ret = tables_build(&t, it, m);
	if (ret)
		return ret;
	for (int j = 0; j < 2; j++) {
		jobs[j] = (struct search_job){
		    &t, params, &stop, j, *arena_bytes, UINT64_MAX, malloc(m * sizeof(uint64_t)),
		    0};
		if (!jobs[j].best_off)
			ret = -ENOMEM;
	}
	if (ret)
		goto err_free;

	if (params->threads >= 2 && !pthread_create(&tid, NULL, search_worker, &jobs[1]))
		threaded = 1;
	if (threaded) {
		search_worker(&jobs[0]);
		pthread_join(tid, NULL);
	} else {
		/* One thread: the target first, then bisection for what is left. */
		struct search_params first = *params;
		double now = planner_now_s();
		first.deadline_s = now + (params->deadline_s - now) * 0.5;
		jobs[0].params = &first;
		search_worker(&jobs[0]);
		jobs[0].params = params;
		if (jobs[0].best == UINT64_MAX)
			search_worker(&jobs[1]);
	}
	for (int j = 0; j < 2; j++)
		if (jobs[j].ret)
			ret = jobs[j].ret;
	if (!ret) {
		/* Fixed preference: the target job, then the bisection job. */
		for (int j = 0; j < 2; j++) {
			if (jobs[j].best < *arena_bytes) {
				*arena_bytes = jobs[j].best;
				memcpy(off, jobs[j].best_off, m * sizeof(uint64_t));
			}
		}
	}
err_free:
	for (int j = 0; j < 2; j++)
		free(jobs[j].best_off);
	tables_free(&t);
	return ret;
}
