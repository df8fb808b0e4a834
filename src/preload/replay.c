/* Replay mode, see replay.h.
 *
 * The plan file is mapped read-only and used in place after validation. Matching
 * costs, in order: a size-class bitmap test (requests whose size class appears
 * nowhere in the plan never unwind), a call-site capture (cached per raw stack),
 * an atomic per-site occurrence counter, and the arena's occupancy check. The
 * common case of all that, a hit on a site of the calling thread's, also exists
 * as functions the shims call directly (replay_express_malloc and the like),
 * without the router: on a small-object churn the calls between the layers cost
 * a tenth of the run. */
#define _GNU_SOURCE
#include "replay.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arena.h"
#include "args_distance.h"
#include "big_bss.h"
#include "callsite.h"
#include "entry_codec.h"
#include "file_io.h"
#include "frame_walk.h"
#include "guard.h"
#include "init.h"
#include "json_line.h"
#include "log.h"
#include "lone_atomic.h"
#include "plan_file.h"
#include "pool_slots.h"
#include "prefault.h"
#include "real_libc.h"
#include "site_keys.h"
#include "site_misses.h"
#include "spare.h"
#include "strict.h"

enum miss_reason {
	MISS_NO_PLAN,
	MISS_SIZE_UNPLANNED,
	MISS_UNKNOWN_SITE,
	MISS_OCCURRENCE_BEYOND,
	MISS_SIZE_TOO_LARGE,
	MISS_ALIGNMENT,
	MISS_SLOT_BUSY,
	MISS_PLAN_UNREADABLE,
	MISS_POOL_FULL,
	MISS_COUNT
};
_Static_assert(MISS_COUNT <= SITE_MISS_REASONS, "a site's misses are counted by reason");

static const char *const miss_names[MISS_COUNT] = {
    "no_plan",	      "size_unplanned", "unknown_site", "occurrence_beyond",
    "size_too_large", "alignment",	"slot_busy",	"plan_unreadable",
    "pool_full",
};

/* How this process's image was found in the plan. */
enum image_match { MATCH_NONE, MATCH_EXACT, MATCH_SAME_EXE, MATCH_PARENT, MATCH_SIBLING };
static const char *const match_names[] = {"none", "exact", "same_exe", "parent", "sibling"};

static struct plan_image image;
bool replay_has_image;
static enum image_match image_match;
/* Whether the plan has an image of this executable, with these arguments or
 * others: a plan in which no process of a command finds its program was made
 * from other programs (memplan replay reads it from the statistics). */
static bool exe_in_plan;
/* The plan could not be read (truncated, corrupt or replaced while the
 * command ran): the process runs with no image, every allocation a
 * plan_unreadable miss, and its line says so, for the command's summary. */
static bool plan_unreadable;
static struct site_keys sites_by_key;			 /* the image's */
static uint64_t size_class_bits[PLAN_SIZE_CLASSES / 64]; /* the image's */

/* Statistics, counted per thread so that the hot path takes no shared cache line:
 * each thread's block is linked into a list once and never freed, and the totals
 * are summed at exit. Only the owner writes a block (relaxed load and store, no
 * read-modify-write); the reader at exit may see a count one short on a thread
 * still running, which is fine for statistics. Every counted call ends as a hit or
 * as one miss, and only outcomes are counted: the calls are the hits and misses
 * together, so the two always add up, even with threads still running. */
struct replay_counters {
	_Atomic uint64_t hits, steady_hits, spare_hits, hit_bytes, misses[MISS_COUNT];
	struct replay_counters *next;
};

static _Atomic(struct replay_counters *) all_counters;
static __thread struct replay_counters *thread_counters __attribute__((tls_model("initial-exec")));
/* Where a thread counts if it cannot get a block of its own (out of memory). */
static struct replay_counters shared_counters;

static struct replay_counters *counters(void)
{
	struct replay_counters *c = thread_counters;

	if (__builtin_expect(c != NULL, 1))
		return c;
	c = __libc_calloc(1, sizeof(*c));
	if (!c)
		return &shared_counters;
	c->next = atomic_load(&all_counters);
	while (!atomic_compare_exchange_weak(&all_counters, &c->next, c))
		;
	thread_counters = c;
	return c;
}

/* Adds n to one of the calling thread's own counters (c is thread_counters). */
static inline void bump_own(_Atomic uint64_t *counter, uint64_t n)
{
	atomic_store_explicit(counter, atomic_load_explicit(counter, memory_order_relaxed) + n,
			      memory_order_relaxed);
}

/* Adds n to one of block c's counters. */
static void bump(struct replay_counters *c, _Atomic uint64_t *counter, uint64_t n)
{
	if (c == &shared_counters)
		atomic_fetch_add_explicit(counter, n, memory_order_relaxed);
	else
		bump_own(counter, n);
}

/* The sum of one counter over all threads. */
static uint64_t total(size_t offset)
{
	uint64_t sum = atomic_load((_Atomic uint64_t *)((char *)&shared_counters + offset));

	for (struct replay_counters *c = atomic_load(&all_counters); c; c = c->next)
		sum += atomic_load((_Atomic uint64_t *)((char *)c + offset));
	return sum;
}
static _Atomic int64_t libc_live_bytes, libc_peak_bytes;
static atomic_flag finished = ATOMIC_FLAG_INIT;

/* Whether some entry of the image has a size of this class (plan_size_class). */
static bool size_planned(uint64_t size)
{
	unsigned c = plan_size_class(size);
	return size_class_bits[c / 64] >> (c % 64) & 1;
}

static void miss(enum miss_reason why)
{
	struct replay_counters *c = counters();

	bump(c, &c->misses[why], 1);
}

void replay_count_to_libc(void)
{
	const enum miss_reason why = plan_unreadable ? MISS_PLAN_UNREADABLE : MISS_NO_PLAN;
	struct replay_counters *c = thread_counters;

	if (__builtin_expect(c != NULL, 1))
		bump_own(&c->misses[why], 1);
	else
		miss(why);
}

static uint32_t intern_site(void *ctx, uint64_t key, const struct plan_frame *frames,
			    uint32_t count)
{
	uint32_t site = site_keys_find(&sites_by_key, key);

	return site == SITE_KEYS_NONE ? CALLSITE_UNKNOWN : site;
}

struct entry_window;

/* The plan's header, and the record and tables of the image being set up,
 * read into memory of memplan's own (plan_file_read_index: never a mapping of
 * the file, which a program that truncates or rewrites the plan while it runs
 * would turn into SIGBUS); the image's are given back once it is set up, the
 * header stays for forked children; the plan's descriptor for
 * reading entries (read_entry), with where each site's blocks of encoded
 * entries lie; and what replay needs of each site. */
static const char *plan_map;
static uint64_t plan_bytes;

/* What choosing an image reads of each image's record (find_image,
 * sibling_image), copied at start-up and kept for forked children: the
 * records themselves are 304 bytes each, and a plan recorded through a shell
 * script has hundreds. */
struct image_key {
	uint64_t exe_key, args_key, entry_count;
	uint64_t requested_peak_bytes; /* tells forked siblings apart (sibling_image) */
	/* Where its arguments are in the file (plan_file_args_span), or
	 * ARGS_OUT_OF_BOUNDS: choosing among the images of an executable reads
	 * them, and only them. */
	uint64_t args_at;
	uint32_t args_bytes;
	uint32_t site_count, flags, fork_ordinal;
};
#define ARGS_OUT_OF_BOUNDS UINT64_MAX
static struct image_key *image_keys; /* the header's image_count */

static uint64_t staged_at, staged_bytes; /* staging_bytes, below */
struct site_plan {
	uint64_t entries;
	uint32_t first_pool, pool_count, tail_entries;
	uint32_t first_gate, gate_count; /* its chunks, in chunk_gates */
};
static struct site_plan *site_plans;
static int plan_fd = -1;
static struct stat plan_identity; /* the file as validated */
static uint64_t entries_file_offset;
static uint64_t *block_offsets;	   /* block k: [block_offsets[k], block_offsets[k + 1]) */
static uint64_t *site_first_block; /* per site */
static struct entry_window *_Atomic *windows; /* per site, made on first use */
static pthread_mutex_t windows_lock = PTHREAD_MUTEX_INITIALIZER;

/* The plan's identity as a process that verified its checksum saw it, in the
 * environment its children inherit: a child that finds the same file does not
 * hash it again (3 ms a process for a plan of 11.6 MB, which a command run
 * through a shell script or make paid in each of its processes). A file
 * changed since has another ctime, which no writer can choose. */
#define PLAN_CHECKED_ENV "MEMPLAN_PLAN_CHECKED"

static void plan_identity_text(const struct stat *st, char *out, size_t cap)
{
	const uint64_t fields[] = {
	    st->st_dev,
	    st->st_ino,
	    (uint64_t)st->st_size,
	    (uint64_t)st->st_mtim.tv_sec,
	    (uint64_t)st->st_mtim.tv_nsec,
	    (uint64_t)st->st_ctim.tv_sec,
	    (uint64_t)st->st_ctim.tv_nsec,
	};
	size_t at = 0;

	/* log_u64, not snprintf: printf's code is not otherwise run by a small
	 * program, and its pages would count in the program's resident set. */
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		char digits[21];
		const char *text = log_u64(digits, fields[i]);
		size_t len = strlen(text);

		if (at + len + 2 > cap)
			break;
		if (i)
			out[at++] = i == 4 || i == 6 ? '.' : ':';
		memcpy(out + at, text, len);
		at += len;
	}
	out[at] = '\0';
}

/* Fills image_keys from the records of the plan open at fd, of len bytes,
 * whose header buf holds, a few records at a time. Returns 0 or a negative
 * errno. */
static void *staging_area(size_t *bytes);

static int read_image_keys(int fd, const void *buf, uint64_t len)
{
	const uint32_t n = plan_file_header(buf)->image_count;
	/* In the staging buffer, unused yet at start-up: a script's plan of 200
	 * images once took 25 reads of 8 records in every process. */
	size_t area_bytes;
	struct plan_image_record *records = staging_area(&area_bytes);
	const uint32_t batch = (uint32_t)(area_bytes / sizeof(*records));
	int r = 0;

	image_keys = __libc_malloc((n ? n : 1) * sizeof(*image_keys));
	if (!image_keys)
		return -ENOMEM;
	for (uint32_t first = 0; r == 0 && first < n; first += batch) {
		uint32_t count = n - first < batch ? n - first : batch;
		r = plan_file_read_records(fd, buf, first, count, records);
		for (uint32_t k = 0; r == 0 && k < count; k++) {
			char why[128];
			uint64_t at;
			uint32_t bytes;
			if (plan_file_args_span(&records[k], first + k, len, &at, &bytes, why,
						sizeof(why)) < 0)
				at = ARGS_OUT_OF_BOUNDS, bytes = 0;
			image_keys[first + k] = (struct image_key){
			    .exe_key = records[k].exe_key,
			    .args_key = records[k].args_key,
			    .entry_count = records[k].entry_count,
			    .requested_peak_bytes = records[k].requested_peak_bytes,
			    .args_at = at,
			    .args_bytes = bytes,
			    .site_count = records[k].site_count,
			    .flags = records[k].flags,
			    .fork_ordinal = records[k].fork_ordinal,
			};
		}
	}
	if (r < 0) {
		__libc_free(image_keys);
		image_keys = NULL;
	}
	return r;
}

/* Reads the plan's header and its images' keys, its checksum verified unless
 * an ancestor did it for this very file; returns the buffer or NULL after
 * reporting. */
static const void *map_plan(void)
{
	const char *path = preload_config.plan_path;
	char why[256], identity[7 * 21 + 1]; /* seven numbers and their separators */
	struct stat st;
	void *tables;
	int fd, r;

	/* Said once per command (log_error_once): every process of a script
	 * would find the same plan it cannot use. */
	fd = file_open_regular(path, &st);
	if (fd < 0) {
		log_error_once(path, ": cannot open the plan: ",
			       fd == -EINVAL ? "not a regular file" : strerror(-fd),
			       "; running on libc", NULL);
		return NULL;
	}
	/* Only the index: the image's tables are read once it is chosen
	 * (read_image), and its entries a block at a time, each checked as it
	 * is decoded (window_refill). */
	plan_identity_text(&st, identity, sizeof(identity));
	const char *checked = getenv(PLAN_CHECKED_ENV);
	bool verify = !checked || strcmp(checked, identity) != 0;
	r = plan_file_read_index(fd, (uint64_t)st.st_size, verify, &tables, why, sizeof(why));
	if (r < 0) {
		close(fd);
		log_error_once(path, ": ", why, "; running on libc", NULL);
		return NULL;
	}
	r = read_image_keys(fd, tables, (uint64_t)st.st_size);
	if (r < 0) {
		plan_file_unmap(tables, (uint64_t)st.st_size);
		close(fd);
		log_error_once(path, ": cannot read its images: ", strerror(-r),
			       "; running on libc", NULL);
		return NULL;
	}
	if (verify)
		setenv(PLAN_CHECKED_ENV, identity, 1);
	plan_fd = fd; /* until the image is read (plan_descriptor_close) */
	plan_identity = st;
	staged_bytes = 0;
	plan_map = tables;
	plan_bytes = (uint64_t)st.st_size;
	return tables;
}

/* Gives back the pages of [from, to) of the plan's buffer that lie wholly
 * inside it: they read as zero afterwards. */
static void give_back_pages(uint64_t from, uint64_t to)
{
	const uint64_t page = 4096;

	from = (from + page - 1) & ~(page - 1);
	to &= ~(page - 1);
	if (from < to)
		madvise((char *)plan_map + from, to - from, MADV_DONTNEED);
}

/* Gives back the record and tables of the image just set up (what replay
 * needs of them is copied), all but the plan's header: with image_keys, a
 * forked child chooses its image without reading and hashing the plan again. */
static void drop_tables(void)
{
	give_back_pages(sizeof(struct plan_file_header), plan_bytes);
}

static int plan_descriptor(void);
static const uint8_t *staged(uint64_t at, uint64_t bytes);

/* Closes the plan's descriptor, opened again by the next read that needs it
 * (plan_descriptor): kept open, it would be among the program's descriptors,
 * which a test that lists a child's, or a daemon that audits its own, sees.
 * Under windows_lock, or with one thread. */
static void plan_descriptor_close(void)
{
	if (plan_fd >= 0)
		close(plan_fd);
	plan_fd = -1;
}

/* Reads the start of image im's entries (and closes the plan, as staged
 * does), while the plan is still open from choosing it: the blocks of the
 * sites a process uses first, which its first refills then find without
 * opening the plan again (a replayed `head` opened it once more). With one
 * thread. */
static void stage_first_entries(const struct plan_image *im)
{
	if (plan_fd >= 0 && im->record.entry_count)
		staged(im->record.entries_offset, 1);
}

/* Gives back the plan's buffer and descriptor. */
static void unmap_plan(void)
{
	plan_file_unmap((void *)plan_map, plan_bytes);
	plan_map = NULL;
	__libc_free(image_keys);
	image_keys = NULL;
	plan_descriptor_close();
}

/* Whether read_image says why it failed: a process that then runs on libc
 * does; a forked child goes on with its parent's image, silently. */
static bool say_unreadable_image = true;

/* Reads image i's record and tables into the plan's buffer, from the plan
 * file as its index was read and checked; false if it cannot. */
static bool read_image(uint32_t i)
{
	char why[256] = "the file changed on disk";
	int fd = plan_descriptor();
	int r = fd < 0
		    ? -ESTALE
		    : plan_file_read_image(fd, (void *)plan_map, plan_bytes, i, why, sizeof(why));

	if (r < 0 && say_unreadable_image)
		log_error(preload_config.plan_path, ": ", why, "; running on libc", NULL);
	return r == 0;
}

/* Reads image i's arguments into args (at most IMAGE_ARGS_MAX bytes of them,
 * *args_bytes), where its key says they are; false if they cannot be, as
 * read_image. */
static bool read_image_args(uint32_t i, char *args, uint32_t *args_bytes)
{
	const struct image_key *key = &image_keys[i];
	char why[256] = "the file changed on disk", n[21];

	if (key->args_at == ARGS_OUT_OF_BOUNDS) {
		if (say_unreadable_image)
			log_error(preload_config.plan_path, ": image ", log_u64(n, i),
				  ": arguments out of bounds; running on libc", NULL);
		return false;
	}
	int fd = plan_descriptor();
	int r = fd < 0 ? -ESTALE
		       : plan_file_read_args(fd, key->args_at, key->args_bytes, args,
					     IMAGE_ARGS_MAX, args_bytes, why, sizeof(why));

	if (r < 0 && say_unreadable_image)
		log_error(preload_config.plan_path, ": ", why, "; running on libc", NULL);
	return r == 0;
}

/* Sets *found to this process's image, its tables read: the first whose keys
 * match; else, of the images of this executable (forked without exec if this
 * process was, and then the same fork of its parent), the one whose arguments
 * are nearest this process's (args_distance; the first of equals).
 * Returns how it was found (MATCH_EXACT also for arguments that differ only in
 * the names of temporary files): MATCH_NONE if no image is of this
 * executable, or if one could not be read (*unreadable, said). Only the images of this
 * executable are read, and only the arguments of those it passes over, one
 * read each (their keys say where), into one buffer: read where they lie in
 * the plan's, the 120 of a shell loop's `head -n N` touched 230 pages of it. */
static enum image_match find_image(struct plan_image *found, bool *unreadable)
{
	const struct plan_file_header *h = plan_file_header(plan_map);
	const struct image_identity *id = &preload_config.image;
	const uint32_t forked = id->fork_ordinal ? PLAN_IMAGE_FORKED : 0;
	uint32_t best = UINT32_MAX;
	struct args_distance best_distance = {0}, d;
	enum image_match how = MATCH_SAME_EXE;

	*unreadable = false;
	for (uint32_t i = 0; i < h->image_count && how != MATCH_EXACT; i++) {
		const struct image_key *rec = &image_keys[i];
		if (rec->exe_key == id->exe_key && rec->args_key == id->args_key) {
			best = i;
			how = MATCH_EXACT;
		}
	}
	/* The arguments of the others are read only when no image is exact (a
	 * script's `head -n N` for 120 values of N has 120 images). Static, not
	 * on the stack: this runs at start-up and in a forked child, each with
	 * one thread, and the thread that forks may have a small stack. */
	static char args[IMAGE_ARGS_MAX] BIG_BSS;
	static struct args_distance_scratch scratch BIG_BSS;
	const char *tmpdir = getenv("TMPDIR");
	uint32_t args_bytes;
	for (uint32_t i = 0; i < h->image_count && how != MATCH_EXACT; i++) {
		const struct image_key *key = &image_keys[i];
		if (key->exe_key != id->exe_key)
			continue;
		if ((key->flags & PLAN_IMAGE_FORKED) != forked ||
		    (forked && key->fork_ordinal != id->fork_ordinal))
			continue;
		if (!read_image_args(i, args, &args_bytes)) {
			*unreadable = true;
			return MATCH_NONE;
		}
		args_distance(args, args_bytes, id->args, id->args_bytes, tmpdir, &scratch, &d);
		if (best == UINT32_MAX || args_distance_compare(&d, &best_distance) < 0) {
			best_distance = d;
			best = i;
		}
		if (!d.places) /* the same run but for its temporary files' names (gcc's cc1) */
			how = MATCH_EXACT;
	}
	if (best == UINT32_MAX)
		return MATCH_NONE;
	if (!read_image(best)) {
		*unreadable = true;
		return MATCH_NONE;
	}
	plan_file_image(plan_map, best, found);
	return how;
}

/* For a child forked without exec that the plan has no image of, because it
 * came past the forks of its parent that the recording kept (the first
 * IMAGE_FORKS_KEPT) or saw (a shorter run), the image of the recorded sibling
 * it repeats. A program that forks in a loop forks the same few kinds of
 * child in turn (a shell, one per command of a pipeline), and the last
 * recorded forks show the turn's length p: the least for which each of the
 * last half of the siblings looks as the one p before it (entries, sites and
 * requested peak: a shell's children of two entries each told apart only by
 * their sizes looked alike, and half of them missed; a sibling
 * that allocated nothing has no image, and looks as another such). Child n
 * repeats the sibling of the last turn whose ordinal is n less a multiple of
 * p. Returns its index, or UINT32_MAX if there is none (no turn shows, or
 * that sibling has no image). */
/* Whether two forked siblings' figures look alike: within an eighth, and
 * slack. When only equal figures were alike, the children of a bash loop
 * whose every tenth turn forks two more showed no turn (the child after
 * those two made one allocation more, at one site more, or a string a byte
 * longer): those past the recorded ones took their parent's image, 29.5%
 * served. */
static bool alike(uint64_t a, uint64_t b, uint64_t slack)
{
	const uint64_t hi = a > b ? a : b, lo = a > b ? b : a;

	return hi - lo <= slack + hi / 8;
}

static uint32_t sibling_image(void)
{
	const struct plan_file_header *h = plan_file_header(plan_map);
	const struct image_identity *id = &preload_config.image;
	uint32_t of[IMAGE_FORKS_KEPT + 1], last = 0;

	/* The siblings are the recorded children of the image the parent
	 * replays (which may be of other arguments than the parent's own). */
	if (!id->fork_ordinal || !replay_has_image)
		return UINT32_MAX;
	for (uint32_t o = 0; o <= IMAGE_FORKS_KEPT; o++)
		of[o] = UINT32_MAX;
	for (uint32_t i = 0; i < h->image_count; i++) {
		const struct image_key *rec = &image_keys[i];
		uint32_t o = rec->fork_ordinal;
		if (rec->exe_key == image.record.exe_key && rec->flags & PLAN_IMAGE_FORKED && o &&
		    o <= IMAGE_FORKS_KEPT && of[o] == UINT32_MAX &&
		    rec->args_key == image_fork_args_key(image.record.args_key, o)) {
			of[o] = i;
			last = o > last ? o : last;
		}
	}
	/* Within the recorded forks, a child with no image is one the
	 * recording saw allocate nothing, or one that went another way. */
	if (id->fork_ordinal <= last)
		return UINT32_MAX;
#define SAME(a, b)                                                                                 \
	(of[a] == UINT32_MAX                                                                       \
	     ? of[b] == UINT32_MAX                                                                 \
	     : of[b] != UINT32_MAX &&                                                              \
		   alike(image_keys[of[a]].entry_count, image_keys[of[b]].entry_count, 1) &&       \
		   alike(image_keys[of[a]].site_count, image_keys[of[b]].site_count, 1) &&         \
		   alike(image_keys[of[a]].requested_peak_bytes,                                   \
			 image_keys[of[b]].requested_peak_bytes, 16))
	/* A turn holds over the last half of the recorded forks at least (the
	 * first ones may differ): one checked on its last p forks alone took two
	 * like children in a row for a turn of one, and a pipeline's forks (14,
	 * 35 and 35 entries, in turn) each got the wrong sibling in two turns of
	 * three. The shortest turn that holds throughout, else the shortest that
	 * holds for three forks in four: a loop whose every tenth turn forks two
	 * more, and whose children changed after its first ten, shows no whole
	 * turn in 64 forks, and its children past them took their parent's
	 * image (29.5% served); the rare ones now take a sibling that is not
	 * theirs, and miss. */
	for (int pass = 0; pass < 2; pass++) {
		const bool need_all = pass == 0;
		for (uint32_t p = 1; p <= last / 2; p++) {
			const uint32_t span = last / 2 > p ? last / 2 : p;
			uint32_t like = 0;
			for (uint32_t o = last - span + 1; o <= last; o++)
				like += SAME(o, o - p);
			if (need_all ? like == span : 4 * like >= 3 * span) {
				uint64_t past = id->fork_ordinal - last;
				return of[id->fork_ordinal - p * ((past + p - 1) / p)];
			}
		}
	}
#undef SAME
	return UINT32_MAX;
}

/* The image's pools, in its order, as replay serves them (pool_slots.h). */
static struct pool_slots *pool_slots;

/* A chunk of a site's pools opens at the site's allocation occurrence, as it
 * did when recorded: before that, the site's own exact blocks and others may
 * hold its bytes, so a block served there early would find them busy, or make
 * the block planned there find them busy. Each site's, by occurrence. */
struct chunk_gate {
	uint32_t occurrence, chunk;
};
static struct chunk_gate *chunk_gates;

static int by_occurrence(const void *a, const void *b)
{
	const struct chunk_gate *x = a, *y = b;

	return (x->occurrence > y->occurrence) - (x->occurrence < y->occurrence);
}

/* Lists each site's chunks in chunk_gates, by the occurrence they open at. */
static int list_gates(void)
{
	const struct plan_image_record *r = &image.record;
	uint32_t n = 0;

	chunk_gates = __libc_malloc((r->chunk_count ? r->chunk_count : 1) * sizeof(*chunk_gates));
	if (!chunk_gates)
		return -ENOMEM;
	for (uint32_t s = 0; s < r->site_count; s++) {
		struct site_plan *sp = &site_plans[s];
		sp->first_gate = n;
		for (uint32_t k = sp->first_pool; k < sp->first_pool + sp->pool_count; k++)
			for (uint32_t c = image.pools[k].first_chunk;
			     c < image.pools[k].first_chunk + image.pools[k].chunk_count; c++)
				chunk_gates[n++] = (struct chunk_gate){image.chunks[c].occurrence, c};
		sp->gate_count = n - sp->first_gate;
		if (sp->gate_count > 1)
			qsort(chunk_gates + sp->first_gate, sp->gate_count, sizeof(*chunk_gates),
			      by_occurrence);
	}
	return 0;
}

static int index_image(void)
{
	const struct plan_image_record *r = &image.record;
	uint64_t blocks = 0;

	windows = __libc_calloc(r->site_count ? r->site_count : 1, sizeof(*windows));
	site_first_block = __libc_malloc((r->site_count ? r->site_count : 1) * sizeof(uint64_t));
	site_plans = __libc_malloc((r->site_count ? r->site_count : 1) * sizeof(*site_plans));
	if (!windows || !site_first_block || !site_plans)
		return -ENOMEM;
	for (uint32_t s = 0; s < r->site_count; s++) {
		const struct plan_site *site = &image.sites[s];
		site_first_block[s] = blocks;
		blocks += plan_site_blocks(site->entry_count);
		site_plans[s] = (struct site_plan){
		    .entries = site->entry_count,
		    .first_pool = site->first_pool,
		    .pool_count = site->pool_count,
		    .tail_entries = site->tail_entries,
		};
	}
	block_offsets = __libc_malloc((blocks + 1) * sizeof(uint64_t));
	if (!block_offsets)
		return -ENOMEM;
	memcpy(block_offsets, image.blocks, (blocks + 1) * sizeof(uint64_t));
	entries_file_offset = r->entries_offset;
	memcpy(size_class_bits, r->size_classes, sizeof(size_class_bits));
	const size_t pool_bytes = (r->pool_count ? r->pool_count : 1) * sizeof(*pool_slots);
	pool_slots = __libc_memalign(_Alignof(struct pool_slots), pool_bytes);
	if (pool_slots)
		memset(pool_slots, 0, pool_bytes);
	if (!pool_slots || pool_slots_init(image.pools, r->pool_count, image.chunks, r->chunk_count,
					   r->arena_bytes, pool_slots) < 0)
		return -ENOMEM;
	spare_keep_init(r->arena_bytes);
	if (list_gates() < 0)
		return -ENOMEM;
	return site_keys_build(&sites_by_key, image.sites, r->site_count);
}

static void *window_store_take(size_t bytes);

int replay_start(void)
{
	static const struct callsite_interner interner = {intern_site, NULL, false, false};
	bool unreadable;
	int r;

	if (!map_plan()) {
		plan_unreadable = true;
		return 1;
	}
	image_match = find_image(&image, &unreadable);
	if (image_match != MATCH_NONE)
		stage_first_entries(&image);
	plan_descriptor_close();
	replay_has_image = exe_in_plan = image_match != MATCH_NONE;
	if (!replay_has_image) {
		/* Its index has images of this executable, unreadable or none this
		 * process can take (only forked children of it were recorded, say,
		 * their parent's plan lost: the summary must not call it another
		 * build); else a process the recording did not see. Counted as
		 * plan_unreadable or no_plan. */
		exe_in_plan = unreadable;
		for (uint32_t i = 0; i < plan_file_header(plan_map)->image_count; i++)
			exe_in_plan |= image_keys[i].exe_key == preload_config.image.exe_key;
		unmap_plan();
		plan_unreadable = unreadable;
		return unreadable ? 1 : 0;
	}
	preload_config.depth = image.record.depth;
	r = index_image();
	if (r == 0)
		r = callsite_init(image.record.depth, &interner);
	/* Without the unwinder, a stack the walks cannot finish goes to libc. */
	if (r == 0 && !callsite_seed_frame_sizes(&image))
		frame_walk_open_unwinder();
	drop_tables(); /* what replay needs of them is copied */
	if (r == 0)
		r = arena_map(image.record.arena_bytes, preload_config.prefault);
	if (r < 0) {
		log_error(preload_config.plan_path, ": cannot set up the arena: ", strerror(-r),
			  "; running on libc", NULL);
		replay_has_image = false;
		return r;
	}
	/* What the main thread's first calls would map, mapped now with the
	 * arena: a program that lowers its RLIMIT_AS once started, to bound
	 * itself, found no room for them and got none of its blocks served. */
	callsite_prepare_thread();
	(void)window_store_take(0);
	return 0;
}

/* Entries are not read through the mapping: a fault there may map a whole large
 * folio of the page cache, and a plan of millions of entries, each read once,
 * would pile up in the program's resident set. Each site instead reads its
 * entries with pread, a block of them (PLAN_BLOCK_ENTRIES, entry_codec.h) at a
 * time, in occurrence order, into a shared staging buffer, and decodes what
 * replay needs of them, 8 bytes each (entry_codec_place: the windows of a jq
 * replay took 140 KiB at 16), into a window of its own (allocated when the
 * site is first used). This is where entries are checked: start-up validated
 * everything but them (plan_file_validate_tables), and the checksum already
 * vouches for their bytes. A block that does not decode is
 * never served, nor is an entry outside the arena (arena_claim refuses it; the
 * full path counts it, place_in_arena): such a plan was not written by memplan,
 * and the arena check keeps even those safe.
 *
 * Refills are serialised by windows_lock, which also guards the staging buffer.
 * Reading a window takes no lock: it is a sequence lock. A refill makes seq odd,
 * decodes into the window and makes seq even again; a reader copies its slot
 * with atomic loads and keeps the copy only if seq was even and unchanged
 * meanwhile.
 *
 * A window holds WINDOW_ENTRIES entries of a block, or WINDOW_WIDE_BLOCKS whole
 * blocks for a site of at least WINDOW_WIDE_ENTRIES entries: a refill's system
 * calls (two, fstat and pread, while the plan was kept open) took with what goes
 * around them 6.6% of a small-object churn's replay at one block per refill,
 * and 3.5% at four (perf). They are four since the plan is opened for each
 * (about 3.8 us, plan_descriptor_close); the churn makes about 500 refills in
 * 3.75 million calls. Wide windows take 4 KiB each; a site of that many
 * entries takes well over 100 KiB of plan file. Other sites are many and most use few of their
 * entries at a time: windows of a whole block (2 KiB, at 16 bytes an entry)
 * took 265 KiB of a jq replay's 4.3 MiB resident set. */
#define WINDOW_ENTRIES	    32u
#define WINDOW_WIDE_BLOCKS  4u
#define WINDOW_WIDE_ENTRIES (64u * PLAN_BLOCK_ENTRIES)

/* A place of a loop's tail, and the index of the first of the tail's first
 * TAIL_TRIED_BITS places with the same bytes (its own index if it is the
 * first; TAIL_FIRST_NONE past them). A tail holds a place as often as the
 * loop's last turns used it, so that one call tried the same place again and
 * again: in sqlite3's longer stream, 840,000 of 2,180,000 tries, 694,000 of
 * them in calls that found no place free at all. Passing over those took
 * 1.2% fewer instructions there (callgrind), serving the same calls. */
struct tail_place {
	uint64_t offset_bytes;
	uint64_t size_bytes : 56, first : 8;
};
#define TAIL_TRIED_BITS 64u
#define TAIL_FIRST_NONE 255u

/* Each window sits on cache lines of its own, and holds its site's occurrence
 * counter: a site belongs to one thread (its key holds the thread's name), so
 * threads counting their own sites never bounce a shared line between cores.
 * Its fields before the slots take 104 bytes. */
struct entry_window {
	_Atomic uint32_t next_occurrence; /* the site's */
	uint32_t site;			  /* whose window this is */
	const void *owner;		  /* the thread that made it (owner_tag) */
	uint32_t entries;		  /* the site's entry count, up to UINT32_MAX */
	/* Occurrences are counted up to counted (its entries, or past them to
	 * its last chunk's gate, gates below). */
	uint32_t counted;
	uint32_t pool_count;
	/* The slots of the first four pools, in 16-byte granules less one (255
	 * for 256 or more, and for a missing pool): pool k holds a request of
	 * class c (plan_size_class, up to 4 KiB) if its byte is c - 1 or more
	 * (first_pool). */
	uint8_t pool_bound[4];
	/* Past its entries a site goes on in its pools or, with none, in its
	 * loop's tail (never both): what the steady state reads first is on the
	 * window's first cache line, with the occurrence count. */
	union {
		struct { /* pool_count > 0 */
			/* the site's, pool_count of them, tightest first */
			struct pool_slots *pools;
			/* For a site of more than four pools, by that class,
			 * the first of them whose slots are as big; else NULL,
			 * or if there was no memory. */
			uint8_t *class_pool;
		};
		struct { /* pool_count == 0 */
			/* The places of the site's last tail_entries entries,
			 * read when first needed (TAIL_UNREAD until then; NULL
			 * if it has none or they cannot be read). */
			struct tail_place *_Atomic tail;
			/* The place at the cursor (tail_cursor), packed
			 * (tail_next_pack); 0: none known. */
			_Atomic uint64_t tail_next;
		};
	};
	_Atomic uint64_t seq; /* odd while a refill rewrites the window */
	/* Occurrence number of slots[0] (occurrences are 32-bit: take_occurrence),
	 * and slots filled. */
	_Atomic uint32_t first, count;
	uint32_t capacity; /* entries: WINDOW_ENTRIES, WINDOW_WIDE_BLOCKS', or the site's */
	/* Its next chunk opens at gate_at (UINT32_MAX: none is left), chunk_gates
	 * [first_gate + gate_next, first_gate + gate_count) being those left. */
	_Atomic uint32_t gate_at;
	uint32_t first_gate, gate_next, gate_count; /* under windows_lock */
	/* The tail's places, once read, and the one to try next. */
	uint32_t tail_entries; /* the site's; 0 for a site of pools */
	_Atomic uint32_t tail_count;
	_Atomic uint32_t tail_cursor;
	/* Searches of the tail left out, and how many the next failed one
	 * leaves out (tail_claim). */
	_Atomic uint16_t tail_skip, tail_backoff;
	_Atomic uint64_t slots[]; /* places (entry_codec_place) */
};
_Static_assert(sizeof(struct entry_window) == 104, "the comment above says 104");
_Static_assert(offsetof(struct entry_window, tail_next) + 8 <= 64,
	       "the steady state's first reads are on the first line");
#define TAIL_UNREAD ((struct tail_place *)1)

/* Its address names the calling thread among those alive. */
static __thread char owner_tag __attribute__((tls_model("initial-exec")));

/* The window's next occurrence number. The thread that made the window (whose
 * site it is, by the thread's name in the key) counts with a plain load and
 * store, any other thread with an atomic add. Should two threads count at once
 * anyway (a thread that took over a dead one's name and stack address, a site
 * reached through a raw clone), an update may be lost and two calls may get the
 * same occurrence: the arena check then refuses the second claim, a miss, never
 * an overlap. */
static inline uint32_t take_occurrence(struct entry_window *w)
{
	uint32_t k = atomic_load_explicit(&w->next_occurrence, memory_order_relaxed);

	/* Past the entries and the chunks' gates, every occurrence is served
	 * alike (pools): the count stays there, and never wraps round to the
	 * first entries. */
	if (k >= w->counted)
		return k;
	if (w->owner == &owner_tag) {
		atomic_store_explicit(&w->next_occurrence, k + 1, memory_order_relaxed);
		return k;
	}
	return lone_fetch_add32(&w->next_occurrence, 1);
}

/* The first of w's pools whose slots hold a block of size bytes, 1 to 4096
 * (tightest first: those before it are too small), or pool_count if none
 * does. From the window itself for a site of up to four pools, as most are:
 * sqlite3's 25 sites of pools have 2 to 4, and a table by size class for each
 * was a cache line more a call (callgrind's simulation). Tried in order, as
 * most requests fit the first: fewer instructions than counting all four
 * without a branch. */
static inline uint32_t first_pool(const struct entry_window *w, size_t size)
{
	if (w->class_pool)
		return w->class_pool[(size + 15) / 16];
	const unsigned below = (unsigned)((size + 15) / 16) - 1;
	uint32_t i = 0;
	while (i < 4 && w->pool_bound[i] < below)
		i++;
	/* Past the first four only for a site whose table could not be made. */
	while (i >= 4 && i < w->pool_count && w->pools[i].slot_bytes < size)
		i++;
	return i;
}

/* The fresh slots of a pool tried, those whose bits say they may be free in
 * the arena, before the next bigger pool is tried. */
#define POOL_TRIES 16u

/* A slot of the site's pools for a block of size bytes aligned to align: a
 * ready one of the tightest pool that fits it, or one the arena gives it, or
 * failing that of the next, and so on; the whole slot, so that the block may
 * grow in place up to it. NULL if there is none. */
static inline void *pool_claim(struct entry_window *w, size_t size, size_t align)
{
	for (uint32_t i = size <= 4096 ? first_pool(w, size) : 0; i < w->pool_count; i++) {
		struct pool_slots *p = &w->pools[i];
		if (p->slot_bytes < size || p->align_bytes < align)
			continue;
		uint64_t offset = pool_slots_take(p, POOL_TRIES);
		if (offset != POOL_SLOTS_NONE)
			return (void *)(arena_base + offset);
	}
	return NULL;
}

/* Whether some pool of the site has slots big and aligned enough. */
static bool pool_fits(const struct entry_window *w, size_t size, size_t align)
{
	for (uint32_t i = 0; i < w->pool_count; i++)
		if (w->pools[i].slot_bytes >= size && w->pools[i].align_bytes >= align)
			return true;
	return false;
}

/* The first_pool bytes of a window whose pools are pools[0..n), tightest
 * first: slots are whole granules, so a pool fits every request of a class once
 * it fits the class's biggest. */
static void pool_bounds(const struct pool_slots *pools, uint32_t n, uint8_t bound[4])
{
	for (uint32_t k = 0; k < 4; k++)
		bound[k] = k < n && pools[k].slot_bytes / 16 <= UINT8_MAX
			       ? (uint8_t)(pools[k].slot_bytes / 16 - 1)
			       : UINT8_MAX;
}

/* The class_pool table of a window whose pools are pools[0..n), tightest
 * first; NULL if they are four or fewer (pool_bounds), or too many, or there
 * is no memory (first_pool then looks past the first four itself). */
static uint8_t *class_pools(const struct pool_slots *pools, uint32_t n)
{
	uint8_t *table = n > 4 && n <= UINT8_MAX ? __libc_malloc(4096 / 16 + 1) : NULL;

	for (uint32_t c = 0, i = 0; table && c <= 4096 / 16; c++) {
		while (i < n && pools[i].slot_bytes < 16 * c)
			i++;
		table[c] = (uint8_t)i;
	}
	return table;
}

/* staging_bytes holds the plan's bytes from file offset staged_at on,
 * staged_bytes of them (0: none), as a refill last read them, under
 * windows_lock. A read takes at least READ_AHEAD_BYTES: sites first used one
 * after another have their blocks one after another in the file, and a refill
 * found in what the last read took needs no system call (each read opens the
 * plan, checks and reads it, and closes it: about 3.8 us). The bytes are the
 * validated file's: plan_descriptor opens no other. */
#define STAGING_ENTRIES	 (WINDOW_WIDE_BLOCKS * PLAN_BLOCK_ENTRIES)
#define READ_AHEAD_BYTES 4096u
/* On a page of its own: a read of READ_AHEAD_BYTES then writes one page, not
 * parts of two. */
static uint8_t staging_bytes[STAGING_ENTRIES * ENTRY_CODEC_MAX_BYTES] BIG_BSS
    __attribute__((aligned(READ_AHEAD_BYTES)));
_Static_assert(READ_AHEAD_BYTES <= sizeof(staging_bytes), "read-ahead");

/* staging_bytes for another use before any refill (read_image_keys); what
 * it held is then no longer staged. */
static void *staging_area(size_t *bytes)
{
	staged_bytes = 0;
	*bytes = sizeof(staging_bytes);
	return staging_bytes;
}

/* An entry's fields, as replay uses them. */
struct entry_place {
	uint64_t offset_bytes, size_bytes;
};

/* Windows live as long as the image and are carved from mappings of their own,
 * a cache line at a time: from the heap, memalign's rounding and the gaps it
 * left cost a jq replay about 60 KiB more (506 windows). Under windows_lock. */
#define WINDOW_STORE_BYTES (64u * 1024)
/* Mapped for writing a quarter store at a time as windows reach it, in one
 * call, not a fault per page: a replayed perl's start-up took 14 faults of
 * 10 us each (here, in a virtual machine) making its windows. */
#define WINDOW_STORE_AHEAD (WINDOW_STORE_BYTES / 4)
struct window_store {
	struct window_store *prev;
	size_t used, mapped; /* bytes handed out, and mapped for writing */
};
static struct window_store *window_store;

static void *window_store_take(size_t bytes)
{
	struct window_store *s = window_store;
	void *p;

	bytes = (bytes + 63) / 64 * 64;
	if (bytes > WINDOW_STORE_BYTES - 64)
		return NULL;
	if (!s || s->used + bytes > WINDOW_STORE_BYTES) {
		s = mmap(NULL, WINDOW_STORE_BYTES, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (s == MAP_FAILED)
			return NULL;
		prefault_write(s, WINDOW_STORE_AHEAD);
		s->prev = window_store;
		s->used = 64; /* the store's own line */
		s->mapped = WINDOW_STORE_AHEAD;
		window_store = s;
	}
	p = (char *)s + s->used;
	s->used += bytes;
	if (s->used > s->mapped) {
		size_t to =
		    (s->used + WINDOW_STORE_AHEAD - 1) / WINDOW_STORE_AHEAD * WINDOW_STORE_AHEAD;
		prefault_write((char *)s + s->mapped, to - s->mapped);
		s->mapped = to;
	}
	return p; /* zero: never handed out before */
}

static void window_store_drop(void)
{
	while (window_store) {
		struct window_store *prev = window_store->prev;
		munmap(window_store, WINDOW_STORE_BYTES);
		window_store = prev;
	}
}

/* The window of site, made on its first use; NULL if out of memory. */
static __attribute__((noinline)) struct entry_window *window_make(uint32_t site)
{
	const struct site_plan *s = &site_plans[site];
	struct entry_window *w;

	bool held = lone_lock(&windows_lock);
	w = atomic_load_explicit(&windows[site], memory_order_relaxed);
	if (!w) {
		uint64_t capacity = s->entries >= WINDOW_WIDE_ENTRIES
					? WINDOW_WIDE_BLOCKS * PLAN_BLOCK_ENTRIES
				    : s->entries < WINDOW_ENTRIES ? s->entries
								  : WINDOW_ENTRIES;
		w = window_store_take(sizeof(*w) + capacity * sizeof(w->slots[0]));
		if (w) {
			w->site = site;
			w->owner = &owner_tag;
			w->entries = (uint32_t)(s->entries < UINT32_MAX ? s->entries : UINT32_MAX);
			w->capacity = (uint32_t)capacity;
			w->pool_count = s->pool_count;
			if (w->pool_count) {
				w->pools = pool_slots + s->first_pool;
				pool_bounds(w->pools, w->pool_count, w->pool_bound);
				w->class_pool = class_pools(w->pools, w->pool_count);
			}
			w->first_gate = s->first_gate;
			w->gate_count = s->gate_count;
			w->counted = w->entries;
			if (s->gate_count) {
				uint32_t last =
				    chunk_gates[s->first_gate + s->gate_count - 1].occurrence;
				if (last >= w->counted)
					w->counted = last < UINT32_MAX ? last + 1 : UINT32_MAX;
			}
			atomic_store_explicit(&w->gate_at,
					      s->gate_count ? chunk_gates[s->first_gate].occurrence
							    : UINT32_MAX,
					      memory_order_relaxed);
			if (!w->pool_count) {
				w->tail_entries = s->tail_entries;
				atomic_store_explicit(&w->tail,
						      w->tail_entries ? TAIL_UNREAD : NULL,
						      memory_order_relaxed);
				atomic_store_explicit(&w->tail_next, 0, memory_order_relaxed);
			}
			atomic_store_explicit(&windows[site], w, memory_order_release);
		}
	}
	lone_unlock(&windows_lock, held);
	return w;
}

static inline struct entry_window *window_of(uint32_t site)
{
	struct entry_window *w = atomic_load_explicit(&windows[site], memory_order_acquire);

	return w ? w : window_make(site);
}

/* Occurrence k from the window, if it is there, usable, and was not being
 * rewritten meanwhile. */
static inline bool window_lookup(struct entry_window *w, uint64_t k, struct entry_place *out)
{
	const uint64_t seq = atomic_load_explicit(&w->seq, memory_order_acquire);
	if (seq & 1)
		return false;
	const uint64_t first = atomic_load_explicit(&w->first, memory_order_relaxed);
	const uint64_t count = atomic_load_explicit(&w->count, memory_order_relaxed);
	if (k - first >= count) /* also when k < first */
		return false;
	const uint64_t place = atomic_load_explicit(&w->slots[k - first], memory_order_relaxed);
	out->offset_bytes = entry_codec_place_offset(place);
	out->size_bytes = entry_codec_place_size(place);
	atomic_thread_fence(memory_order_acquire);
	return atomic_load_explicit(&w->seq, memory_order_relaxed) == seq;
}

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* The last open of the plan failed for want of a right or a descriptor. */
static _Atomic bool plan_open_refused;

/* A descriptor of the plan file as it was validated, or -1: the one open since
 * the index was read, else the plan opened again by its path, if that is still
 * the same file (a plan replaced since, by a new recording, no longer serves:
 * the entries read so far do). Under windows_lock, or with one thread. */
static int plan_descriptor(void)
{
	struct stat st;
	int fd;

	if (plan_fd >= 0)
		return plan_fd;
	if (preload_is_sealed()) { /* a sandbox may end the process at an open */
		atomic_store_explicit(&plan_open_refused, true, memory_order_relaxed);
		return -1;
	}
	fd = file_open_regular(preload_config.plan_path, &st);
	atomic_store_explicit(&plan_open_refused,
			      fd == -EPERM || fd == -EACCES || fd == -EMFILE || fd == -ENFILE,
			      memory_order_relaxed);
	if (fd < 0)
		return -1;
	if (!same_file(&st, &plan_identity)) {
		close(fd);
		return -1;
	}
	plan_fd = fd;
	return plan_fd;
}

/* The plan's bytes [at, at + bytes) of the file, from staging_bytes, read now
 * if they are not there; NULL if they cannot be read. Under windows_lock. */
static const uint8_t *staged(uint64_t at, uint64_t bytes)
{
	if (staged_bytes && at >= staged_at && at + bytes <= staged_at + staged_bytes)
		return staging_bytes + (at - staged_at);
	staged_bytes = 0;
	if (bytes > sizeof(staging_bytes) || at > plan_bytes)
		return NULL; /* the validated plan's blocks are not that long */
	uint64_t want = bytes > READ_AHEAD_BYTES ? bytes : READ_AHEAD_BYTES;
	if (want > plan_bytes - at)
		want = plan_bytes - at;
	ssize_t got = pread(plan_descriptor(), staging_bytes, want, (off_t)at);
	plan_descriptor_close();
	if (got < (ssize_t)bytes)
		return NULL;
	staged_at = at;
	staged_bytes = (uint64_t)got;
	return staging_bytes;
}

/* Reads the block of site that holds occurrence k into the window, under
 * windows_lock. Returns false if the plan can no longer be read (memplan's
 * descriptor was closed and the file is gone or was replaced: plan_descriptor). */
static bool window_refill(struct entry_window *w, uint64_t k)
{
	static _Atomic uint64_t block_places[PLAN_BLOCK_ENTRIES] BIG_BSS; /* windows_lock */
	const uint32_t site = w->site;
	const uint64_t entries = site_plans[site].entries;
	const uint64_t seq = atomic_load_explicit(&w->seq, memory_order_relaxed);
	/* The blocks from the one that holds k, as many as the window takes (one,
	 * for a window smaller than a block). */
	const uint64_t site_blocks = plan_site_blocks(entries), kb = k / PLAN_BLOCK_ENTRIES;
	const bool part = w->capacity < PLAN_BLOCK_ENTRIES;
	uint64_t blocks = part ? 1 : w->capacity / PLAN_BLOCK_ENTRIES;
	if (blocks > site_blocks - kb)
		blocks = site_blocks - kb;
	const uint64_t *offsets = block_offsets + site_first_block[site] + kb;
	const uint64_t at = offsets[0], bytes = offsets[blocks] - at;
	uint64_t n = entries - kb * PLAN_BLOCK_ENTRIES;
	if (n > blocks * PLAN_BLOCK_ENTRIES)
		n = blocks * PLAN_BLOCK_ENTRIES;
	/* A part window holds the capacity's worth of the block that k's falls in. */
	uint64_t first = kb * PLAN_BLOCK_ENTRIES, skip = 0;
	if (part) {
		skip = (k - first) / w->capacity * w->capacity;
		first += skip;
	}
	const uint8_t *encoded = staged(entries_file_offset + at, bytes);
	bool ok = encoded != NULL;

	atomic_store_explicit(&w->seq, seq + 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	for (uint64_t b = 0; ok && b < blocks; b++) {
		/* The offsets rise (validated), so each block lies within the bytes read. */
		uint64_t in = n - b * PLAN_BLOCK_ENTRIES;
		ok = entry_codec_decode_places(
			 encoded + (offsets[b] - at), offsets[b + 1] - offsets[b],
			 (uint32_t)(in < PLAN_BLOCK_ENTRIES ? in : PLAN_BLOCK_ENTRIES),
			 part ? block_places : w->slots + b * PLAN_BLOCK_ENTRIES) == 0;
	}
	if (part) {
		n = n - skip < w->capacity ? n - skip : w->capacity;
		for (uint64_t i = 0; ok && i < n; i++)
			atomic_store_explicit(
			    &w->slots[i],
			    atomic_load_explicit(&block_places[skip + i], memory_order_relaxed),
			    memory_order_relaxed);
	}
	atomic_store_explicit(&w->first, (uint32_t)first, memory_order_relaxed);
	atomic_store_explicit(&w->count, ok ? (uint32_t)n : 0, memory_order_relaxed);
	atomic_store_explicit(&w->seq, seq + 2, memory_order_release);
	return ok;
}

/* Occurrence k of the window's site into *out, past the window: read from the
 * plan. Returns false if the plan can no longer be read or its block does not
 * decode. Leaves errno as it was: the program's malloc succeeds all the same
 * (served or not), and a program that used up its descriptors, or whose plan
 * was removed, would otherwise find EMFILE or ENOENT there after it, in place
 * of what its own failed call said. And no cancellation acts in it: open,
 * pread and close are cancellation points, and a thread cancelled there died
 * holding windows_lock, which hung every other thread at its next refill (a
 * program cancelling workers that allocate, 5 runs of 5); glibc's malloc has
 * no cancellation point. */
static __attribute__((noinline)) bool read_entry(struct entry_window *w, uint64_t k,
						 struct entry_place *out)
{
	const int saved_errno = errno;
	int cancel_state;
	bool ok;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
	bool held = lone_lock(&windows_lock);
	/* Under the lock no refill is under way: a lookup fails only outside the
	 * window (another thread may have just refilled it). */
	ok = window_lookup(w, k, out) || (window_refill(w, k) && window_lookup(w, k, out));
	lone_unlock(&windows_lock, held);
	pthread_setcancelstate(cancel_state, NULL);
	errno = saved_errno;
	return ok;
}

static inline bool place_in_arena(const struct entry_place *e);

/* Reads the places of w's tail, once (whichever thread gets there first
 * publishes them), in occurrence order, a place as often as its last turns
 * used it: places tried in proportion to their use served sqlite3 on a longer
 * script better (97.5% of allocations) than each place once (95.4%). An entry
 * that cannot be read, or lies outside the arena, is left out. Returns them
 * (w->tail_count set to how many), or NULL if out of memory. */
static __attribute__((noinline, cold)) struct tail_place *tail_read(struct entry_window *w)
{
	struct tail_place *tail = __libc_malloc(w->tail_entries * sizeof(*tail));
	struct tail_place *expected = TAIL_UNREAD;
	struct entry_place e;
	uint32_t n = 0;

	for (uint32_t i = 0; tail && i < w->tail_entries; i++) {
		if (!read_entry(w, site_plans[w->site].entries - w->tail_entries + i, &e) ||
		    !place_in_arena(&e))
			continue;
		/* An entry in the arena is smaller than 2^56 bytes: no arena
		 * is that big (user space holds 2^56 bytes at most). */
		tail[n] = (struct tail_place){.offset_bytes = e.offset_bytes,
					      .size_bytes = e.size_bytes,
					      .first = n < TAIL_TRIED_BITS ? n : TAIL_FIRST_NONE};
		for (uint32_t j = 0; j < n && j < TAIL_TRIED_BITS; j++)
			if (tail[j].offset_bytes == e.offset_bytes &&
			    tail[j].size_bytes == e.size_bytes) {
				tail[n].first = j;
				break;
			}
		n++;
		spare_keep(e.offset_bytes, e.size_bytes);
	}
	/* Every thread that reads them counts the same n: stored before the
	 * pointer is published, it is seen by whoever sees the pointer. */
	atomic_store_explicit(&w->tail_count, n, memory_order_relaxed);
	if (!atomic_compare_exchange_strong(&w->tail, &expected, tail)) {
		__libc_free(tail);
		return expected;
	}
	return tail;
}

/* tail_next's form of a place: bit 63 set, its offset in granules in bits
 * 31-62, its size in bytes in bits 0-30; 0 for a place too far or too big to
 * say so (the search then finds it). */
#define TAIL_NEXT_KNOWN	       (UINT64_C(1) << 63)
#define TAIL_NEXT_SIZE_BITS    31
#define TAIL_NEXT_SIZE_MASK    ((UINT64_C(1) << TAIL_NEXT_SIZE_BITS) - 1)
#define TAIL_NEXT_GRANULES_MAX (UINT64_C(1) << 32)

static uint64_t tail_next_pack(const struct tail_place *e)
{
	const uint64_t granule = e->offset_bytes / PLAN_GRANULE_BYTES;

	if (granule >= TAIL_NEXT_GRANULES_MAX || e->size_bytes > TAIL_NEXT_SIZE_MASK)
		return 0;
	return TAIL_NEXT_KNOWN | granule << TAIL_NEXT_SIZE_BITS | e->size_bytes;
}

/* Whether a block of size bytes aligned to align fits the place at offset
 * (a granule multiple) of bytes, and the place is free: claimed, the block. */
static inline void *tail_place_claim(uint64_t offset, uint64_t bytes, size_t size, size_t align)
{
	/* Most places tried are still held by the site's previous block there,
	 * which starts where the place does: one bit says so, for much less
	 * than a claim that fails costs. */
	if (size <= bytes && !(offset & (align - 1)) && !arena_granule_held(offset))
		return arena_claim(offset, bytes);
	return NULL;
}

/* tail_claim past the place at the cursor: the first place whose entry the
 * block fits and whose bytes are free, from the cursor on (past it if the
 * caller tried it: tried_cursor), within POOL_TRIES (a place this call tried
 * already is passed over, for those of the first TAIL_TRIED_BITS). NULL if
 * there is none. The cursor stays on the place claimed. */
static __attribute__((noinline)) void *tail_search(struct entry_window *w, size_t size,
						   size_t align, bool tried_cursor)
{
	struct tail_place *tail = atomic_load_explicit(&w->tail, memory_order_acquire);

	if (tail == TAIL_UNREAD)
		tail = tail_read(w);
	const uint32_t n = atomic_load_explicit(&w->tail_count, memory_order_relaxed);
	if (!tail || !n)
		return NULL;
	uint32_t c = atomic_load_explicit(&w->tail_cursor, memory_order_relaxed);
	if (c >= n)
		c = 0;
	uint64_t tried = 0; /* bit i: the place first at tail[i] */
	uint32_t t = 0;
	if (tried_cursor) {
		if (tail[c].first < TAIL_TRIED_BITS)
			tried = UINT64_C(1) << tail[c].first;
		if (++c == n)
			c = 0;
		t = 1;
	}
	for (; t < n && t < POOL_TRIES; t++) {
		const uint32_t at = c;
		const struct tail_place *e = &tail[c];
		if (++c == n)
			c = 0;
		if (e->first < TAIL_TRIED_BITS) {
			const uint64_t bit = UINT64_C(1) << e->first;
			if (tried & bit)
				continue;
			tried |= bit;
		}
		void *q = tail_place_claim(e->offset_bytes, e->size_bytes, size, align);
		if (q) {
			atomic_store_explicit(&w->tail_cursor, at, memory_order_relaxed);
			atomic_store_explicit(&w->tail_next, tail_next_pack(e),
					      memory_order_relaxed);
			return q;
		}
	}
	atomic_store_explicit(&w->tail_cursor, c, memory_order_relaxed);
	atomic_store_explicit(&w->tail_next, tail_next_pack(&tail[c]), memory_order_relaxed);
	return NULL;
}

/* A place of w's tail (a site with no pools) for a block of size bytes aligned
 * to align, or NULL if none is free. The place at the cursor first, from the
 * window's first line: a loop whose block dies before its next one comes
 * takes the same place again, and finds it there without reading the tail's
 * places (sqlite3's longer stream: seven claims in ten; reading a place had
 * cost 0.7 cache misses a claim, callgrind's simulation). Any place of the
 * tail may be tried in any order: the arena's check claims it or refuses it,
 * and tail_next, however stale, only ever names one of them. */
#define TAIL_BACKOFF_MAX 64u
static inline void *tail_claim(struct entry_window *w, size_t size, size_t align)
{
	const uint64_t next = atomic_load_explicit(&w->tail_next, memory_order_relaxed);

	if (next) {
		void *q =
		    tail_place_claim((next >> TAIL_NEXT_SIZE_BITS & (TAIL_NEXT_GRANULES_MAX - 1)) *
					 PLAN_GRANULE_BYTES,
				     next & TAIL_NEXT_SIZE_MASK, size, align);
		if (q)
			return q;
	}
	/* A run deeper than its recording holds all its tail's places at once
	 * (bc's recursion, f(25) on a plan of f(15)): each call then tried
	 * POOL_TRIES places in vain before the spare space served it, 37% of
	 * replay's time. After a search that finds none, the next ones are left
	 * out, twice as many after each (as spare.h does). */
	uint16_t skip = atomic_load_explicit(&w->tail_skip, memory_order_relaxed);
	if (skip) {
		atomic_store_explicit(&w->tail_skip, skip - 1, memory_order_relaxed);
		return NULL;
	}
	void *q = tail_search(w, size, align, next != 0);
	uint16_t backoff = atomic_load_explicit(&w->tail_backoff, memory_order_relaxed);
	if (q)
		backoff = 0;
	else
		backoff =
		    backoff ? (2 * backoff < TAIL_BACKOFF_MAX ? 2 * backoff : TAIL_BACKOFF_MAX) : 1;
	atomic_store_explicit(&w->tail_backoff, backoff, memory_order_relaxed);
	if (!q)
		atomic_store_explicit(&w->tail_skip, backoff, memory_order_relaxed);
	return q;
}

/* Opens the site's chunks whose gates occurrence k has reached. */
static __attribute__((noinline)) void open_chunks(struct entry_window *w, uint32_t k)
{
	bool held = lone_lock(&windows_lock);
	const struct chunk_gate *gates = chunk_gates + w->first_gate;

	while (w->gate_next < w->gate_count && gates[w->gate_next].occurrence <= k)
		pool_slots_open(gates[w->gate_next++].chunk);
	atomic_store_explicit(&w->gate_at,
			      w->gate_next < w->gate_count ? gates[w->gate_next].occurrence
							   : UINT32_MAX,
			      memory_order_relaxed);
	lone_unlock(&windows_lock, held);
}

/* A place of the site's steady state for occurrence k: a pool slot, or, for a
 * site with no pools, a place of its tail. NULL if none is free. */
static inline void *steady_claim(struct entry_window *w, uint32_t k, size_t size, size_t align)
{
	if (!w->pool_count)
		return tail_claim(w, size, align);
	if (k >= atomic_load_explicit(&w->gate_at, memory_order_relaxed))
		open_chunks(w, k);
	return pool_claim(w, size, align);
}

/* Starts this forked child's statistics from zero. With one thread. */
static void reset_counters(void)
{
	/* The counter blocks stay allocated: the parent's threads are gone, and
	 * nothing refers to them once the list is empty. */
	atomic_store(&all_counters, NULL);
	thread_counters = NULL;
	memset(&shared_counters, 0, sizeof(shared_counters));
	atomic_store(&libc_live_bytes, 0);
	atomic_store(&libc_peak_bytes, 0);
	site_misses_reset();
	/* A child that made one allocation once said it had walked its
	 * parent's 20 stacks. */
	callsite_walks_reset();
	frame_walk_unwinds_reset();
}

/* Forgets the image being replayed: its sites, windows and statistics. With one
 * thread (a forked child). */
static void drop_image(void)
{
	site_keys_free(&sites_by_key);
	for (uint32_t s = 0; windows && s < image.record.site_count; s++) {
		struct entry_window *w = atomic_load(&windows[s]);
		if (w && w->pool_count)
			__libc_free(w->class_pool);
		else if (w && atomic_load(&w->tail) != TAIL_UNREAD)
			__libc_free(atomic_load(&w->tail));
	}
	window_store_drop();
	__libc_free(chunk_gates);
	chunk_gates = NULL;
	__libc_free(windows);
	__libc_free(site_first_block);
	__libc_free(block_offsets);
	pool_slots_fini(pool_slots, image.record.pool_count);
	spare_keep_drop();
	__libc_free(pool_slots);
	__libc_free(site_plans);
	site_plans = NULL;
	pool_slots = NULL;
	windows = NULL;
	site_first_block = block_offsets = NULL;
	reset_counters();
	replay_has_image = false;
}

/* Makes this forked child replay its own image, *mine, in an arena of its own.
 * Returns false if the inherited arena cannot be retired: the child then goes on
 * with its parent's image. */
static bool take_own_image(const struct plan_image *mine)
{
	int r;

	if (!arena_retire())
		return false;
	drop_image();
	callsite_forget_sites(); /* they were the parent's image's site numbers */
	image = *mine;
	preload_config.depth = image.record.depth;
	r = index_image();
	/* The unwinder stays as the parent left it: a dlopen in a child forked
	 * while another thread was inside one may find the loader's tables half
	 * changed. */
	if (r == 0)
		callsite_seed_frame_sizes(&image);
	drop_tables();
	if (r == 0)
		r = arena_map(image.record.arena_bytes, preload_config.prefault);
	if (r < 0) {
		char pid[21];
		log_error(preload_config.plan_path, ": cannot set up the arena of forked child ",
			  log_u64(pid, (uint64_t)getpid()), ": ", strerror(-r), "; running on libc",
			  NULL);
		return true; /* its own all the same: its statistics say no_plan */
	}
	replay_has_image = true;
	return true;
}

void replay_after_fork_child(void)
{
	struct plan_image mine;

	pthread_mutex_init(&windows_lock, NULL);
	for (uint32_t s = 0; windows && s < image.record.site_count; s++) {
		struct entry_window *w = atomic_load(&windows[s]);
		/* A thread of the parent may have been refilling it: start afresh. */
		if (w && atomic_load(&w->seq) & 1) {
			atomic_store(&w->count, 0);
			atomic_fetch_add(&w->seq, 1);
		}
	}
	/* The child of a process that replays a recorded image (of other
	 * arguments, or a sibling) is that image's recorded child, which the
	 * recording named after it: a loop run 50 times on a plan of 10 gave
	 * each child of its subshell no plan ("forked children not in the
	 * plan", 0% served). A process on its parent's image has no children
	 * of its own there. */
	if (replay_has_image && image_match != MATCH_PARENT)
		preload_config.image.args_key =
		    image_fork_args_key(image.record.args_key, preload_config.image.fork_ordinal);
	/* preload_config.image is the child's now (image_identity_fork): its
	 * image is found in the index the parent kept. */
	enum image_match how = MATCH_NONE;
	bool unreadable;
	say_unreadable_image = false;
	if (plan_map)
		how = find_image(&mine, &unreadable);
	if (how == MATCH_NONE && plan_map && !unreadable) {
		uint32_t sibling = sibling_image();
		if (sibling != UINT32_MAX && read_image(sibling)) {
			plan_file_image(plan_map, sibling, &mine);
			how = MATCH_SIBLING;
		}
	}
	if (how != MATCH_NONE)
		stage_first_entries(&mine);
	plan_descriptor_close();
	if (how == MATCH_NONE || !take_own_image(&mine)) {
		/* A child the recording did not run, or with no room to retire
		 * its parent's arena: it goes on with its parent's image, and
		 * counts what it does. */
		if (plan_map)
			drop_tables();
		reset_counters();
		image_match = replay_has_image ? MATCH_PARENT : MATCH_NONE;
		return;
	}
	image_match = how;
}

/* Whether an entry lies inside the arena, as every entry of a plan memplan
 * wrote does. */
static inline bool place_in_arena(const struct entry_place *e)
{
	const uint64_t arena = image.record.arena_bytes;

	return e->offset_bytes <= arena && e->size_bytes <= arena - e->offset_bytes;
}

/* Says once per process that the plan has entries replay cannot serve (what),
 * which a plan memplan wrote and nobody changed never has. They are counted as
 * plan_unreadable misses. */
static __attribute__((cold, noinline)) void report_unreadable(const char *what)
{
	static atomic_flag said = ATOMIC_FLAG_INIT;

	if (!atomic_flag_test_and_set(&said))
		log_error(preload_config.plan_path, ": ", what, "; those are not served", NULL);
}

/* The window of the caller's site, for a request of size bytes, or NULL with
 * the miss counted. */
static inline __attribute__((always_inline)) struct entry_window *caller_window(size_t size)
{
	if (!replay_has_image) {
		miss(plan_unreadable ? MISS_PLAN_UNREADABLE : MISS_NO_PLAN);
		return NULL;
	}
	if (!size || !size_planned(size)) {
		miss(MISS_SIZE_UNPLANNED);
		return NULL;
	}
	void **cached_window;
	uint32_t site = callsite_capture(&cached_window);
	if (site == CALLSITE_UNKNOWN) {
		miss(MISS_UNKNOWN_SITE);
		return NULL;
	}
	struct entry_window *w = cached_window ? *cached_window : NULL;
	if (!w) {
		w = window_of(site);
		if (!w) {
			miss(MISS_PLAN_UNREADABLE);
			site_misses_note(site, image.record.site_count, MISS_PLAN_UNREADABLE);
			return NULL;
		}
		if (cached_window)
			*cached_window = w;
	}
	return w;
}

/* Occurrence k (below the site's entries) of w's site into *e, or false, said
 * once, if the plan cannot give it. */
static bool occurrence_entry(struct entry_window *w, uint32_t k, struct entry_place *e)
{
	if (!window_lookup(w, k, e) && !read_entry(w, k, e)) {
		/* A sandbox, or the program's use of its descriptor limit, that
		 * keeps the plan from being opened again is no fault of the plan's,
		 * and the program's stderr is not for it: only counted. */
		if (!atomic_load_explicit(&plan_open_refused, memory_order_relaxed))
			report_unreadable("entries that cannot be read (the file changed on "
					  "disk, or a block does not decode)");
		return false;
	}
	if (!place_in_arena(e)) {
		report_unreadable("entries outside its arena (not a plan memplan wrote)");
		return false;
	}
	return true;
}

void *replay_alloc(size_t size, size_t align, bool zero)
{
	struct replay_counters *c = counters();
	enum miss_reason why = MISS_OCCURRENCE_BEYOND;
	struct entry_window *w;
	struct entry_place e;
	void *p = NULL;

	/* As recording does not record such a block (arena_map aligns the arena
	 * to no more), it takes no occurrence of its site here either. */
	if (align > PLAN_MAX_ALIGN_BYTES) {
		miss(MISS_ALIGNMENT);
		return NULL;
	}
	if (!(w = caller_window(size)))
		return NULL;
	uint32_t k = take_occurrence(w);
	if (k < w->entries) {
		if (!occurrence_entry(w, k, &e))
			why = MISS_PLAN_UNREADABLE;
		else if (size > e.size_bytes)
			why = MISS_SIZE_TOO_LARGE;
		else if (e.offset_bytes & (align - 1)) /* align is a power of two */
			why = MISS_ALIGNMENT;
		else if (!(p = arena_claim(e.offset_bytes, e.size_bytes)))
			why = MISS_SLOT_BUSY;
	}
	/* Past its entries, or where its entry could not serve it (a run that went
	 * another way than the recording), a site's steady state serves it. */
	if (!p && (w->pool_count || w->tail_entries)) {
		p = steady_claim(w, k, size, align);
		if (p)
			bump(c, &c->steady_hits, 1);
		else if (k >= w->entries)
			why = !w->pool_count || pool_fits(w, size, align) ? MISS_POOL_FULL
									  : MISS_SIZE_TOO_LARGE;
	}
	/* A site past its entries that its steady state cannot serve takes the
	 * arena's free granules before libc (spare.h), and so does an entry
	 * whose place is still held: a run whose order varies with scheduling
	 * (bash reaping 300 jobs as they end) holds some blocks longer than its
	 * recording did, and 1-10% of its calls went to libc so. Not for other
	 * misses within the entries: the bytes free now may be those of an
	 * entry still to come (a 256 KiB block of python3's was displaced to
	 * libc when every miss within the entries took spare space). */
	if (!p && (k >= w->entries || why == MISS_SLOT_BUSY) && align <= PLAN_GRANULE_BYTES) {
		/* A site with no steady state keeps what it takes (spare.h). */
		p = spare_claim(size, !(w->pool_count || w->tail_entries));
		if (p)
			bump(c, &c->spare_hits, 1);
	}
	if (!p) {
		miss(why);
		site_misses_note(w->site, image.record.site_count, why);
		return NULL;
	}
	if (zero)
		memset(p, 0, size);
	bump(c, &c->hits, 1);
	bump(c, &c->hit_bytes, size);
	return p;
}

/* The window of the caller's site, given the cookie the thread's cache keeps
 * for the site, with the next occurrence's entry in it, for replay_express;
 * NULL if any of it is not at hand, or if the site may be counted by another
 * thread too: the express path takes its occurrence only once the claim passed,
 * which is take_occurrence's plain count, so it is for the thread that made the
 * window or for a process of one thread. With the guard set. */
static inline __attribute__((always_inline)) struct entry_window *
express_entry(void **cookie, uint32_t *k, struct entry_place *e)
{
	struct entry_window *w = *cookie;

	if (!w || (w->owner != &owner_tag && !lone_thread()))
		return NULL;
	*k = atomic_load_explicit(&w->next_occurrence, memory_order_relaxed);
	return *k < w->entries && window_lookup(w, *k, e) ? w : NULL;
}

/* express_entry, for a request of size bytes aligned to align (a power of two)
 * that the entry can take. */
static inline __attribute__((always_inline)) struct entry_window *
express_entry_fits(void **cookie, size_t size, size_t align, uint32_t *k, struct entry_place *e)
{
	struct entry_window *w = express_entry(cookie, k, e);

	return w && size <= e->size_bytes && !(e->offset_bytes & (align - 1)) ? w : NULL;
}

/* Replay knows where each site's next block will be, which no allocator can:
 * after a hit it fetches the lines of the site's next block into the cache
 * while the program runs on. (Fetching its check word too gave no measurable
 * gain in paired runs.) A program writes a new block at once (memset,
 * constructors), and a planned block was last touched when its previous
 * occupant was written, long before: freeing it reads nothing of it, unlike a
 * free list threaded through freed blocks, so without this the miss falls on
 * the program's first write. Blocks are fetched up to PREFETCH_BLOCK_BYTES:
 * past that, the program's own streaming is prefetched by the hardware. A
 * prefetch never faults, so an entry of a plan not written by memplan, outside
 * the arena, costs nothing: its address is made from integers
 * (implementation-defined, not undefined, for one outside any object). */
#define PREFETCH_BLOCK_BYTES 512u

static inline void prefetch_next_block(struct entry_window *w, uint64_t k)
{
	const uint64_t i = k - atomic_load_explicit(&w->first, memory_order_relaxed);

	if (i >= atomic_load_explicit(&w->count, memory_order_relaxed))
		return; /* not in the window yet: the refill will read the plan anyway */
	const uint64_t place = atomic_load_explicit(&w->slots[i], memory_order_relaxed);
	const uintptr_t block = arena_base + entry_codec_place_offset(place);
	const uint64_t bytes = entry_codec_place_size(place);

	/* One jump to the block's last line, then straight down: a loop over the
	 * lines took twice the instructions (callgrind). Size 0 fetches the most. */
#define PREFETCH_LINE(n) __builtin_prefetch((const void *)(block + 64u * (n)), 1, 3)
	_Static_assert(PREFETCH_BLOCK_BYTES == 8 * 64, "one case per line below");
	switch ((bytes - 1) / 64) {
	default:
		PREFETCH_LINE(7); /* fall through */
	case 6:
		PREFETCH_LINE(6); /* fall through */
	case 5:
		PREFETCH_LINE(5); /* fall through */
	case 4:
		PREFETCH_LINE(4); /* fall through */
	case 3:
		PREFETCH_LINE(3); /* fall through */
	case 2:
		PREFETCH_LINE(2); /* fall through */
	case 1:
		PREFETCH_LINE(1); /* fall through */
	case 0:
		PREFETCH_LINE(0);
	}
#undef PREFETCH_LINE
}

/* An express hit of occurrence k of w's site: takes the occurrence and counts
 * the call in c, the calling thread's own counters (thread_counters).
 * always_inline: with link-time optimisation gcc otherwise makes it a call. */
static inline __attribute__((always_inline)) void
express_hit(struct replay_counters *c, struct entry_window *w, uint32_t k, size_t size)
{
	atomic_store_explicit(&w->next_occurrence, k + 1, memory_order_relaxed);
	bump_own(&c->hits, 1);
	bump_own(&c->hit_bytes, size);
	prefetch_next_block(w, k + 1);
}

/* The cookie of the caller's site from the thread's caches of origins and of
 * walked stacks, or NULL if neither knows it. */
static inline __attribute__((always_inline)) void **express_site(uintptr_t return_address,
								 uintptr_t frame)
{
	void **cookie;
	uint32_t site = callsite_cached(return_address, frame, &cookie);

	if (site == CALLSITE_UNKNOWN)
		site = callsite_walked(return_address, frame, &cookie);
	return site < CALLSITE_UNPLANNED ? cookie : NULL;
}

/* The express path of a site past its entries: its steady state, for the
 * thread whose site it is (or a process of one thread), with the guard set. The
 * block, counted, or NULL with nothing done. Apart: the steady state of a long
 * run, but no cost to the path of exact entries. */
static __attribute__((noinline)) void *express_pool(struct replay_counters *c, void **cookie,
						    size_t size, size_t align)
{
	struct entry_window *w = *cookie;
	uint32_t k;
	void *p;

	if (!w || !(w->pool_count || atomic_load_explicit(&w->tail, memory_order_relaxed)) ||
	    (w->owner != &owner_tag && !lone_thread()) ||
	    (k = atomic_load_explicit(&w->next_occurrence, memory_order_relaxed)) < w->entries)
		return NULL; /* the occurrence is taken where the miss is counted */
	_Atomic uint64_t *kind = &c->steady_hits;
	if (!(p = steady_claim(w, k, size, align))) {
		/* As replay_alloc would, without trying the same places again. */
		if (align > PLAN_GRANULE_BYTES || !(p = spare_claim(size, false)))
			return NULL;
		kind = &c->spare_hits;
	}
	if (k < w->counted)
		atomic_store_explicit(&w->next_occurrence, k + 1, memory_order_relaxed);
	bump_own(&c->hits, 1);
	bump_own(kind, 1);
	bump_own(&c->hit_bytes, size);
	return p;
}

/* replay_express's claim for the site whose cookie this is, with the guard set:
 * the block, or NULL with nothing done. always_inline, as express_entry: with
 * several callers gcc makes a call of it, 2% more instructions on the churn
 * replay (callgrind). */
static inline __attribute__((always_inline)) void *
express_claim(struct replay_counters *c, void **cookie, size_t size, size_t align)
{
	struct entry_place e;
	uint32_t k;
	void *p;

	struct entry_window *w = express_entry_fits(cookie, size, align, &k, &e);
	if (!w)
		return express_pool(c, cookie, size, align);
	p = arena_claim(e.offset_bytes, e.size_bytes);
	if (p)
		express_hit(c, w, k, size);
	return p;
}

/* replay_express for an origin the thread's cache of origins does not know: one
 * that many call paths reach (a wrapper's call of malloc), whose stack is
 * walked. Apart, so that replay_express calls nothing before its end for an
 * origin the cache knows (callgrind, churn replay: 1.5% fewer instructions). */
static __attribute__((noinline)) void *express_walked(size_t size, size_t align, bool zero,
						      uintptr_t return_address, uintptr_t frame)
{
	struct replay_counters *c = thread_counters;
	void **cookie;
	void *p = NULL;

	guard_enter();
	if (callsite_walked(return_address, frame, &cookie) < CALLSITE_UNPLANNED)
		p = express_claim(c, cookie, size, align);
	guard_leave();
	return p && zero ? memset(p, 0, size) : p;
}

/* replay_express for a block e the arena claims through arena_claim_span (it
 * found the block valid: arena_claim_near). Apart, so that replay_express makes
 * no call but tail calls, which spares its hot path some register saving
 * (callgrind, churn replay: 0.6% fewer instructions); six arguments at most,
 * all in registers, or it would be no tail call. With the guard set; leaves
 * it. */
static __attribute__((noinline)) void *express_far(struct entry_window *w, uint32_t k, size_t size,
						   bool zero, uint64_t offset_bytes,
						   uint64_t size_bytes)
{
	uint64_t first = offset_bytes / PLAN_GRANULE_BYTES;
	uint64_t last = first + plan_granules_of(size_bytes) - 1;
	void *p = arena_claim_span(offset_bytes, first, last);

	if (p)
		express_hit(thread_counters, w, k, size);
	guard_leave();
	return p && zero ? memset(p, 0, size) : p;
}

/* The steady state's common case: a site past its entries whose tightest pool
 * that fits has a ready slot in the word at its cursor. The block, counted, or
 * NULL with nothing done; the caller takes the occurrence if it is counted. */
static inline __attribute__((always_inline)) void *
express_ready(struct replay_counters *c, const struct entry_window *w, size_t size, size_t align)
{
	if (size > 4096 || !w->pool_count)
		return NULL;
	const uint32_t i = first_pool(w, size);
	if (i >= w->pool_count || w->pools[i].align_bytes < align)
		return NULL;
	uint64_t offset = pool_slots_take_near(&w->pools[i]);
	if (offset == POOL_SLOTS_NONE)
		return NULL;
	bump_own(&c->hits, 1);
	bump_own(&c->steady_hits, 1);
	bump_own(&c->hit_bytes, size);
	return (void *)(arena_base + offset);
}

/* The body of the replay_express_ functions. A signal handler that allocates
 * between the loads of the express path and its stores after the claim goes to
 * libc: the guard is set. */
static inline __attribute__((always_inline)) void *
replay_express(size_t size, size_t align, bool zero, uintptr_t return_address, uintptr_t frame)
{
	struct replay_counters *c = thread_counters;
	struct entry_place e;
	void **cookie;
	uint32_t k;

	if (!replay_has_image || !c || !size || !size_planned(size))
		return NULL;
	guard_enter();
	const uint32_t site = callsite_cached(return_address, frame, &cookie);
	if (site >= CALLSITE_UNPLANNED) {
		guard_leave();
		return site == CALLSITE_UNKNOWN
			   ? express_walked(size, align, zero, return_address, frame)
			   : NULL;
	}
	struct entry_window *w = *cookie;
	if (w && (k = atomic_load_explicit(&w->next_occurrence, memory_order_relaxed)) >= w->entries) {
		/* Past the entries. Up to the last chunk's gate the occurrence is
		 * counted (by the thread whose site it is), and one at a gate
		 * opens a chunk first (express_pool). */
		const bool counting = k < w->counted;
		void *q;
		if ((!counting || (k < atomic_load_explicit(&w->gate_at, memory_order_relaxed) &&
				   (w->owner == &owner_tag || lone_thread()))) &&
		    (q = express_ready(c, w, size, align))) {
			if (counting)
				atomic_store_explicit(&w->next_occurrence, k + 1,
						      memory_order_relaxed);
			guard_leave();
			return zero ? memset(q, 0, size) : q;
		}
	}
	/* express_claim, with the claim split so that a long block's is a tail call. */
	w = express_entry_fits(cookie, size, align, &k, &e);
	if (!w) {
		void *q = express_pool(c, cookie, size, align);
		guard_leave();
		return q && zero ? memset(q, 0, size) : q;
	}
	switch (arena_claim_near(e.offset_bytes, e.size_bytes)) {
	case ARENA_NEAR_CLAIMED:
		express_hit(c, w, k, size);
		guard_leave();
		void *p = (void *)(arena_base + e.offset_bytes);
		return zero ? memset(p, 0, size) : p;
	case ARENA_NEAR_FAR:
		return express_far(w, k, size, zero, e.offset_bytes, e.size_bytes);
	default:
		guard_leave();
		return NULL;
	}
}

/* One function each for malloc, calloc and the aligned allocations: with align
 * and zero constant, the hit path needs fewer registers (callgrind, churn
 * replay: 2% fewer instructions than one function for all). */
void *replay_express_malloc(size_t size, uintptr_t return_address, uintptr_t frame)
{
	return replay_express(size, 1, false, return_address, frame);
}

void *replay_express_calloc(size_t size, uintptr_t return_address, uintptr_t frame)
{
	return replay_express(size, 1, true, return_address, frame);
}

void *replay_express_aligned(size_t size, size_t align, uintptr_t return_address, uintptr_t frame)
{
	/* An entry's offset decides its alignment only up to the arena's own. */
	if (align > PLAN_MAX_ALIGN_BYTES)
		return NULL;
	return replay_express(size, align, false, return_address, frame);
}

void *replay_express_realloc(void *p, size_t size, uintptr_t return_address, uintptr_t frame)
{
	struct replay_counters *c = thread_counters;
	void *q = NULL;
	uint32_t k;

	if (!replay_has_image || !c || !size)
		return NULL;
	guard_enter();
	size_t planned = arena_block_bytes(p);
	if (!planned) {
		/* Not a live block: the full path says so. */
	} else if (size > planned) {
		void **cookie = size_planned(size) ? express_site(return_address, frame) : NULL;
		q = cookie ? express_claim(c, cookie, size, 1) : NULL;
		if (q) {
			memcpy(q, p, planned);
			pool_slots_arena_free(p);
		}
	} else if (size_planned(size)) {
		/* It stays in place, and uses up its occurrence as when recording
		 * (replay_consume, take_occurrence): past the entries too, up to
		 * the last chunk's gate. Counted only below the entries, a buffer
		 * grown by realloc in place never reached the gates of its bigger
		 * pools: 25% of a growing string's calls served. */
		void **cookie = express_site(return_address, frame);
		struct entry_window *w = cookie ? *cookie : NULL;
		if (w && (w->owner == &owner_tag || lone_thread())) {
			k = atomic_load_explicit(&w->next_occurrence, memory_order_relaxed);
			if (k < w->counted)
				atomic_store_explicit(&w->next_occurrence, k + 1,
						      memory_order_relaxed);
			bump_own(&c->hits, 1);
			bump_own(&c->hit_bytes, size);
			q = p;
		}
	}
	guard_leave();
	return q;
}

void replay_consume(size_t size)
{
	/* Served in place: a hit, and the occurrence is used up as when recording. */
	struct replay_counters *c = counters();
	struct entry_window *w = caller_window(size);

	if (w) {
		take_occurrence(w);
		bump(c, &c->hits, 1);
		bump(c, &c->hit_bytes, size);
	}
}

void replay_wait_reads(void)
{
	pthread_mutex_lock(&windows_lock);
	pthread_mutex_unlock(&windows_lock);
}

bool replay_tracks_libc(void)
{
	return replay_has_image;
}

void replay_note_libc(int64_t bytes)
{
	int64_t now, peak = atomic_load_explicit(&libc_peak_bytes, memory_order_relaxed);

	/* With one thread, no bus lock (lone_atomic.h): one less on each call
	 * that goes to libc. */
	if (lone_thread()) {
		now = atomic_load_explicit(&libc_live_bytes, memory_order_relaxed) + bytes;
		atomic_store_explicit(&libc_live_bytes, now, memory_order_relaxed);
		if (now > peak)
			atomic_store_explicit(&libc_peak_bytes, now, memory_order_relaxed);
		return;
	}
	now = atomic_fetch_add_explicit(&libc_live_bytes, bytes, memory_order_relaxed) + bytes;

	while (now > peak &&
	       !atomic_compare_exchange_weak_explicit(&libc_peak_bytes, &peak, now,
						      memory_order_relaxed, memory_order_relaxed))
		;
}

/* Bytes of argv[0]'s file name a line keeps: enough for a name, and room left
 * in the line for it (json_line.h). */
#define ARGV0_NAME_MAX 128

/* Writes into out (ARGV0_NAME_MAX + 1 bytes) the file name of argv[0] if it is
 * not the executable's: what the user ran (redis-server, a link to
 * redis-check-rdb), which memplan replay names the image by; else "". */
static void argv0_name(char *out)
{
	const struct image_identity *id = &preload_config.image;
	const size_t len = strnlen(id->args, id->args_bytes);
	const char *slash = memrchr(id->args, '/', len);
	const char *name = slash ? slash + 1 : id->args;
	const char *exe = strrchr(id->exe_path, '/');
	size_t n = len - (size_t)(name - id->args);

	exe = exe ? exe + 1 : id->exe_path;
	if (!n || (strlen(exe) == n && !memcmp(exe, name, n)))
		n = 0;
	if (n > ARGV0_NAME_MAX)
		n = ARGV0_NAME_MAX;
	memcpy(out, name, n);
	out[n] = '\0';
}

/* The sites that missed most, by their keys in the plan (memplan show --json
 * names them so), each with its misses by reason: "missed_sites":
 * {"0441b79c1a6051c3": {"pool_full": 3120}}. */
static void write_missed_sites(struct json_line *j)
{
	struct site_misses_row top[SITE_MISSES_TOP];
	unsigned n = site_misses_top(top);
	char key[17];

	json_key_object(j, "missed_sites");
	for (unsigned i = 0; i < n; i++) {
		uint64_t k = site_keys_key(&sites_by_key, top[i].site);
		for (int d = 15; d >= 0; d--, k >>= 4)
			key[d] = "0123456789abcdef"[k & 15];
		key[16] = '\0';
		json_key_object(j, key);
		for (unsigned r = 0; r < MISS_COUNT; r++)
			if (top[i].by_reason[r])
				json_key_u64(j, miss_names[r], top[i].by_reason[r]);
		json_end(j);
	}
	json_end(j);
}

void replay_finish(void)
{
	struct json_line j;
	char argv0[ARGV0_NAME_MAX + 1];
	char pid[21];
	int r;

	if (atomic_flag_test_and_set(&finished))
		return;
	/* Each counter read once: threads may still be counting. */
	uint64_t hits = total(offsetof(struct replay_counters, hits)), missed = 0;
	uint64_t misses[MISS_COUNT];
	for (int i = 0; i < MISS_COUNT; i++)
		missed += misses[i] = total(offsetof(struct replay_counters, misses[i]));
	strict_judge(exe_in_plan, hits, hits + missed);
	/* As a recording keeps no image of a forked child that allocated nothing,
	 * such a child writes no line. */
	if (!preload_config.stats_path[0] || (preload_config.image.fork_ordinal && !(hits + missed)))
		return;
	json_begin(&j);
	json_key_str(&j, "exe", preload_config.image.exe_path);
	argv0_name(argv0);
	if (argv0[0])
		json_key_str(&j, "argv0", argv0);
	json_key_u64(&j, "pid", (uint64_t)getpid());
	if (preload_config.image.fork_ordinal)
		json_key_u64(&j, "fork", preload_config.image.fork_ordinal);
	if (preload_is_sealed()) /* the figures end where the program sandboxed itself */
		json_key_bool(&j, "sandboxed", true);
	json_key_str(&j, "plan", preload_config.plan_path);
	json_key_u64(&j, "allocs", hits + missed);
	json_key_u64(&j, "planned", replay_has_image ? image.record.entry_count : 0);
	json_key_u64(&j, "pools", replay_has_image ? image.record.pool_count : 0);
	json_key_bool(&j, "exe_in_plan", exe_in_plan);
	if (plan_unreadable)
		json_key_bool(&j, "plan_unreadable", true);
	json_key_str(&j, "match", match_names[image_match]);
	if (replay_has_image) /* which one: `memplan show` gives each image's pid */
		json_key_u64(&j, "image_pid", image.record.pid);
	json_key_u64(&j, "hits", hits);
	json_key_u64(&j, "steady_hits", total(offsetof(struct replay_counters, steady_hits)));
	json_key_u64(&j, "spare_hits", total(offsetof(struct replay_counters, spare_hits)));
	json_key_u64(&j, "hit_bytes", total(offsetof(struct replay_counters, hit_bytes)));
	json_key_object(&j, "misses");
	for (int i = 0; i < MISS_COUNT; i++)
		json_key_u64(&j, miss_names[i], misses[i]);
	json_end(&j);
	if (replay_has_image)
		write_missed_sites(&j);
	json_key_u64(&j, "arena_bytes", replay_has_image ? image.record.arena_bytes : 0);
	json_key_u64(&j, "lower_bound_bytes",
		     replay_has_image ? image.record.lower_bound_bytes : 0);
	int64_t peak = atomic_load(&libc_peak_bytes);
	if (replay_has_image)
		json_key_u64(&j, "libc_peak_bytes", peak > 0 ? (uint64_t)peak : 0);
	json_key_u64(&j, "unwinds", frame_walk_unwinds());
	json_key_u64(&j, "walks", callsite_walks());
	json_end(&j);
	r = json_append_line(&j, preload_config.stats_path);
	if (r < 0 && !preload_sandbox_refused(r))
		log_error(preload_config.stats_path, ": cannot write statistics: ", strerror(-r),
			  " (pid ", log_u64(pid, (uint64_t)getpid()), ")", NULL);
}
