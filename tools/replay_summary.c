/* The replay summary line, see replay_summary.h.
 *
 * Images are named by reason, each reason once ("for other arguments: cc1
 * 89.5%, as 91.2%"), the images that missed most first, and a few at most per
 * reason: a script that ran sixty processes still gets one readable line. */
#define _GNU_SOURCE
#include "replay_summary.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "array_grow.h"
#include "image_label.h"
#include "missed_sites.h"
#include "size_text.h"
#include "stats_lines.h"
#include "text_safe.h"

/* Names listed per reason; the rest are counted. */
#define NAMES_PER_REASON 4

/* Calls a process (or those of one name) must have made to be named as poorly
 * served, unless they are a tenth of the command's: four shells' children
 * that made one each, and missed it, are no lead in a run of thousands. */
#define POOR_MIN_ALLOCS 100

struct reader {
	struct replay_summary *s;
	size_t cap;
	bool out_of_memory;
};

static void add_line(const struct stats_line *line, void *ctx)
{
	struct reader *r = ctx;
	struct replay_summary *s = r->s;

	if (s->count == r->cap) {
		struct replay_image *grown = array_grow(s->images, &r->cap, sizeof(*grown), 16);
		if (!grown) {
			r->out_of_memory = true;
			return;
		}
		s->images = grown;
	}
	struct replay_image *im = &s->images[s->count++];
	memset(im, 0, sizeof(*im));
	const char *slash = strrchr(line->exe, '/'), *name = slash ? slash + 1 : line->exe;
	size_t at = 0;
	text_safe_append(im->name, sizeof(im->name), &at, name, strlen(name));
	at = 0;
	image_label_name(im->label, sizeof(im->label), &at, name, line->argv0);
	im->allocs = line->allocs;
	im->hits = line->hits;
	im->arena_bytes = line->arena_bytes;
	im->in_plan = line->exe_in_plan;
	im->other_args = !strcmp(line->match, "same_exe");
	im->parent_image = !strcmp(line->match, "parent");
	im->sandboxed = line->sandboxed;
	im->unreadable = line->plan_unreadable;
	uint64_t most = 0;
	const char *top = NULL;
	for (uint32_t k = 0; k < line->miss_count; k++)
		if (line->miss[k] > most) {
			most = line->miss[k];
			top = line->miss_name[k];
			at = 0;
			text_safe_append(im->top_miss, sizeof(im->top_miss), &at, top, strlen(top));
		}
	/* The site named is the one that missed most for that reason: the site
	 * that missed most of all may have missed once, for another, while most
	 * calls missed at no site of the plan (unknown_site). */
	most = 0;
	for (uint32_t i = 0; top && i < line->missed_site_count; i++) {
		const struct stats_missed_site *m = &line->missed_sites[i];
		for (uint32_t k = 0; k < m->reason_count; k++)
			if (!strcmp(m->reason_name[k], top) && m->by_reason[k] > most) {
				most = m->by_reason[k];
				im->has_top_site = true;
				im->top_site_key = m->key;
			}
	}
	s->allocs += im->allocs;
	s->hits += im->hits;
	/* A child served from its parent's image has its parent's arena. */
	if (!im->parent_image)
		s->arena_bytes += im->arena_bytes;
	s->any_in_plan |= im->in_plan;
	s->unreadable += im->unreadable;
	s->under_valgrind |= !strcmp(name, "valgrind.bin") || !strcmp(name, "valgrind");
}

int replay_summary_read(const char *path, off_t from, struct replay_summary *out)
{
	struct reader r = {.s = out};

	memset(out, 0, sizeof(*out));
	int n = stats_lines_read(path, from, add_line, &r);
	if (r.out_of_memory) {
		replay_summary_free(out);
		return -ENOMEM;
	}
	return n;
}

void replay_summary_free(struct replay_summary *s)
{
	free(s->images);
	memset(s, 0, sizeof(*s));
}

/* Functions of a site the summary names: enough to place it, short enough
 * for one line. */
#define SUMMARY_SITE_DEPTH 3

static bool poorly_served(const struct replay_image *im, double poor_pct)
{
	return im->allocs && (double)im->hits * 100.0 < poor_pct * (double)im->allocs;
}

bool replay_summary_has_sites(const struct replay_summary *s, double poor_pct)
{
	for (size_t i = 0; i < s->count; i++)
		if (s->images[i].has_top_site && poorly_served(&s->images[i], poor_pct))
			return true;
	return false;
}

void replay_summary_name_sites(struct replay_summary *s, const void *buf, double poor_pct)
{
	for (size_t i = 0; i < s->count; i++) {
		struct replay_image *im = &s->images[i];
		if (im->has_top_site && poorly_served(im, poor_pct))
			missed_site_name(buf, im->top_site_key, im->name, SUMMARY_SITE_DEPTH, NULL,
					 im->top_site, sizeof(im->top_site));
	}
}

/* "100%", "0%", else one decimal rounded down, so that 99.96% never reads 100%. */
static void percent_text(char *out, size_t cap, uint64_t hits, uint64_t allocs)
{
	if (hits >= allocs)
		snprintf(out, cap, "100%%");
	else if (!hits)
		snprintf(out, cap, "0%%");
	else
		snprintf(out, cap, "%.1f%%", floor(1000.0 * (double)hits / (double)allocs) / 10);
}

void replay_summary_share_text(const struct replay_summary *s, char *out, size_t cap)
{
	percent_text(out, cap, s->hits, s->allocs);
}

double replay_summary_share(const struct replay_summary *s)
{
	return s->allocs ? 100.0 * (double)s->hits / (double)s->allocs : 100.0;
}

enum reason {
	UNREADABLE,
	OTHER_ARGS,
	OTHER_BUILD,
	OTHER_PATH,
	NOT_IN_PLAN,
	PAST_FORKS,
	POOR,
	SANDBOXED,
	REASONS
};

static const char *const reason_label[REASONS] = {
    "could not read the plan",
    "for other arguments",
    "another build in the plan",
    "recorded at another path, without a build-id",
    "not in the plan",
    "forked children not in the plan",
    "poorly served",
    "counted up to the sandbox they set",
};

static const struct replay_plan_exe *find_exe(const struct replay_plan_exe *exes, size_t count,
					      const char *name)
{
	for (size_t i = 0; i < count; i++)
		if (!strcmp(exes[i].name, name))
			return &exes[i];
	return NULL;
}

static int by_misses_desc(const void *pa, const void *pb)
{
	const struct replay_image *a = *(const struct replay_image *const *)pa;
	const struct replay_image *b = *(const struct replay_image *const *)pb;
	uint64_t ma = a->allocs - a->hits, mb = b->allocs - b->hits;

	return (ma < mb) - (ma > mb);
}

/* What the misses of a reason the preload library counts at no site of the
 * plan were, said where a site would be named; NULL for another reason. */
static const char *siteless(const char *reason)
{
	if (!strcmp(reason, "unknown_site"))
		return "calls from stacks the plan has no site for";
	if (!strcmp(reason, "size_unplanned"))
		return "sizes the recording never asked for";
	return NULL;
}

/* Images of one name, listed as one ("sh x3"). */
struct group {
	struct replay_image *first; /* the one that missed most */
	uint64_t allocs, hits;
	unsigned same;
};

/* Lists the images of one reason, those with the same name as one. A group
 * poorly served with fewer than POOR_MIN_ALLOCS calls, under a tenth of the
 * command's (all_allocs), is left out (it counts in the share all the same);
 * so is the reason, if that leaves none. */
static void print_reason(FILE *out, enum reason why, struct replay_image **list, size_t n,
			 uint64_t all_allocs, double poor_pct)
{
	struct group *groups = calloc(n, sizeof(*groups));
	size_t shown = 0, count = 0;

	if (!groups)
		return;
	qsort(list, n, sizeof(*list), by_misses_desc);
	for (size_t i = 0; i < n; i++) {
		if (!list[i])
			continue; /* counted with an earlier one of its name */
		struct group g = {list[i], list[i]->allocs, list[i]->hits, 1};
		for (size_t k = i + 1; k < n; k++)
			if (list[k] && !strcmp(list[k]->label, list[i]->label)) {
				g.allocs += list[k]->allocs;
				g.hits += list[k]->hits;
				g.same++;
				list[k] = NULL;
			}
		if (why != POOR || g.allocs >= POOR_MIN_ALLOCS || g.allocs * 10 >= all_allocs)
			groups[count++] = g;
	}
	if (count)
		fprintf(out, "; %s:", reason_label[why]);
	for (; shown < count && shown < NAMES_PER_REASON; shown++) {
		const struct group *g = &groups[shown];
		char pct[16];
		percent_text(pct, sizeof(pct), g->hits, g->allocs);
		fprintf(out, "%s %s", shown ? "," : "", g->first->label);
		if (g->same > 1)
			fprintf(out, " x%u", g->same);
		if (why == OTHER_ARGS || why == PAST_FORKS || why == POOR || why == SANDBOXED)
			fprintf(out, " %s", pct);
		/* The reason and the site are named only for an image served
		 * under poor_pct (the site is looked up only for those). */
		const bool poor =
		    why == POOR || (why == OTHER_ARGS && poorly_served(g->first, poor_pct));
		const char *reason = poor ? g->first->top_miss : "";
		const char *site = why == POOR || why == OTHER_ARGS ? g->first->top_site : "";
		if (*reason && *site)
			fprintf(out, " (mostly %s; most missed at %s)", reason, site);
		else if (*reason && siteless(reason))
			fprintf(out, " (mostly %s: %s)", reason, siteless(reason));
		else if (*reason)
			fprintf(out, " (mostly %s)", reason);
		else if (*site)
			fprintf(out, " (most missed at %s)", site);
	}
	if (count > shown)
		fprintf(out, " and %zu more", count - shown);
	free(groups);
}

const struct replay_plan_exe *replay_summary_other_build(const struct replay_summary *s,
							 const struct replay_plan_exe *exes,
							 size_t exe_count)
{
	const struct replay_plan_exe *exe;

	for (size_t i = 0; i < s->count; i++)
		if (!s->images[i].in_plan && !s->images[i].unreadable &&
		    (exe = find_exe(exes, exe_count, s->images[i].name)))
			return exe;
	return NULL;
}

void replay_summary_print(FILE *out, const struct replay_summary *s,
			  const struct replay_plan_exe *exes, size_t exe_count, double poor_pct)
{
	struct replay_image **lists[REASONS] = {0};
	size_t counts[REASONS] = {0};
	char pct[16], n[32], size[32];

	if (!s->allocs) {
		fprintf(out, "memplan replay: no allocations to serve (%zu process image%s)\n",
			s->count, s->count == 1 ? "" : "s");
		return;
	}
	percent_text(pct, sizeof(pct), s->hits, s->allocs);
	fprintf(out, "memplan replay: %s of %s allocation%s served from the arena", pct,
		count_text(n, sizeof(n), s->allocs), s->allocs == 1 ? "" : "s");
	if (s->count == 1)
		fprintf(out, " (%s, arena %s)", s->images[0].label,
			size_text(size, sizeof(size), s->arena_bytes, false));
	else
		fprintf(out, " by %zu process images (arenas %s in all)", s->count,
			size_text(size, sizeof(size), s->arena_bytes, false));

	for (int r = 0; r < REASONS; r++)
		lists[r] = calloc(s->count ? s->count : 1, sizeof(*lists[r]));
	for (size_t i = 0; i < s->count; i++) {
		struct replay_image *im = &s->images[i];
		enum reason why;
		if (!im->allocs)
			continue;
		const struct replay_plan_exe *exe;
		if (im->unreadable)
			why = UNREADABLE;
		else if (!im->in_plan && (exe = find_exe(exes, exe_count, im->name)))
			why = exe->by_path ? OTHER_PATH : OTHER_BUILD;
		else if (!im->in_plan)
			why = NOT_IN_PLAN;
		else if (im->sandboxed) /* what it did inside goes unsaid */
			why = SANDBOXED;
		else if (im->other_args)
			why = OTHER_ARGS;
		else if (poorly_served(im, poor_pct))
			why = im->parent_image ? PAST_FORKS : POOR;
		else
			continue;
		if (lists[why])
			lists[why][counts[why]++] = im;
	}
	for (int r = 0; r < REASONS; r++) {
		if (counts[r])
			print_reason(out, (enum reason)r, lists[r], counts[r], s->allocs, poor_pct);
		free(lists[r]);
	}
	fputc('\n', out);
}
