/* Randomized allocator stress, for the differential test (scripts/stress.sh).
 *
 * usage: stress SEED THREADS OPS
 *
 * SEED may be `env`: the seed is then $STRESS_SEED. The command line is then the
 * same for every seed, so that memplan (which keys a plan by executable and
 * arguments) replays a plan recorded with one seed on a run with another.
 *
 * Each of THREADS threads (1..16) does OPS random operations: malloc, calloc,
 * realloc (grow, shrink, runs of small steps around one size, from NULL, to a
 * much larger size), posix_memalign / aligned_alloc / memalign, reallocarray,
 * free, malloc_usable_size, and hands a few blocks to whichever thread takes
 * them next. Each kind of call is made from several functions of its own, so
 * that there are many call sites. Every live block holds a pattern of its own
 * (from its tag and the byte's index), checked in full before the block is
 * freed or reallocated, in its kept prefix after each realloc, for all the
 * thread's blocks every VERIFY_EVERY operations, and at the end.
 *
 * With STRESS_FORKS=1 in the environment, each thread also forks now and then
 * (do_fork): the child checks its copy of the thread's blocks and allocates a
 * few of its own; or the parent sends it SIGTERM at once, before it may have
 * run, and it must end by that signal (exit 5 otherwise).
 *
 * Each thread's random sequence comes from (SEED, thread index) alone, so its
 * work and its digest are the same however the threads are scheduled. A block
 * handed to another thread carries its tag; whoever frees it checks it, and
 * adds to totals that are sums (the same whatever the order). So the one line
 * printed at the end is a function of SEED, THREADS, OPS and STRESS_FORKS only:
 *
 *   stress seed=S threads=T ops=O checked_bytes=B checked_blocks=K digest=HEX
 *
 * On a wrong byte: `stress: CORRUPT thread T op N block TAG byte I` on stderr
 * (thread T is THREADS for the main thread's last checks), and exit 3. Other
 * failures (a wrong alignment, a usable size below the size asked for, a NULL
 * from the allocator) also exit 3 or 4 with a line of their own. Usage: exit 2.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS  16
#define MAX_LIVE     320
#define VERIFY_EVERY 4096
#define SMALL_MAX    512u
#define MEDIUM_MAX   (64u << 10)
#define LARGE_MAX    (4u << 20)
#define RUN_MAX_SIZE 8192u /* blocks that realloc runs work on */
#define QUEUE_CAP    2048

/* --- The pattern: word w of a block (bytes 8w..8w+7) is key ^ (w+1)*K. ------ */

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

static inline uint64_t pattern_word(uint64_t key, uint64_t w)
{
	return key ^ ((w + 1) * 0x9e3779b97f4a7c15ull);
}

static inline unsigned char pattern_byte(uint64_t key, size_t i)
{
	return (unsigned char)(pattern_word(key, i >> 3) >> (8 * (i & 7)));
}

/* The word as it lies in memory: byte k of it is pattern_byte(.., 8w + k). */
static inline uint64_t stored_word(uint64_t key, uint64_t w)
{
	uint64_t v = pattern_word(key, w);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	return v;
}

static void fill_range(unsigned char *p, size_t from, size_t to, uint64_t key)
{
	size_t i = from;

	for (; i < to && (i & 7); i++)
		p[i] = pattern_byte(key, i);
	for (; i + 8 <= to; i += 8) {
		uint64_t v = stored_word(key, i >> 3);
		memcpy(p + i, &v, 8);
	}
	for (; i < to; i++)
		p[i] = pattern_byte(key, i);
}

/* The index of the first byte in [from, to) that breaks the pattern, or SIZE_MAX. */
static size_t check_range(const unsigned char *p, size_t from, size_t to, uint64_t key)
{
	size_t i = from;

	for (; i < to && (i & 7); i++)
		if (p[i] != pattern_byte(key, i))
			return i;
	for (; i + 8 <= to; i += 8) {
		uint64_t v;
		memcpy(&v, p + i, 8);
		if (v != stored_word(key, i >> 3))
			break;
	}
	for (; i < to; i++)
		if (p[i] != pattern_byte(key, i))
			return i;
	return SIZE_MAX;
}

/* --- Call sites: several distinct functions per kind of call. ---------------- */

#if defined(__GNUC__) && !defined(__clang__)
#define SITE __attribute__((noipa)) /* no inlining, cloning or merging */
#else
#define SITE __attribute__((noinline))
#endif
/* After the call (no tail call: the site's frame stays on the stack), and
 * different in each site (a constant of its own), so no two are alike. */
#define BARRIER(p, k) __asm__ volatile("" : : "r"(p), "i"(k) : "memory")

#define MALLOC_SITE(k)                                                                             \
	static SITE void *malloc_site_##k(size_t n)                                                \
	{                                                                                          \
		void *p = malloc(n);                                                               \
		BARRIER(p, k);                                                                     \
		return p;                                                                          \
	}
#define CALLOC_SITE(k)                                                                             \
	static SITE void *calloc_site_##k(size_t m, size_t n)                                      \
	{                                                                                          \
		void *p = calloc(m, n);                                                            \
		BARRIER(p, 100 + k);                                                               \
		return p;                                                                          \
	}
#define REALLOC_SITE(name, k, id)                                                                  \
	static SITE void *name##_site_##k(void *old, size_t n)                                     \
	{                                                                                          \
		void *p = realloc(old, n);                                                         \
		BARRIER(p, id);                                                                    \
		return p;                                                                          \
	}
#define REALLOCARRAY_SITE(k)                                                                       \
	static SITE void *reallocarray_site_##k(void *old, size_t m, size_t n)                     \
	{                                                                                          \
		void *p = reallocarray(old, m, n);                                                 \
		BARRIER(p, 800 + k);                                                               \
		return p;                                                                          \
	}
#define POSIX_MEMALIGN_SITE(k)                                                                     \
	static SITE void *posix_memalign_site_##k(size_t align, size_t n)                          \
	{                                                                                          \
		void *p = NULL;                                                                    \
		if (posix_memalign(&p, align, n) != 0)                                             \
			p = NULL;                                                                  \
		BARRIER(p, 900 + k);                                                               \
		return p;                                                                          \
	}
#define ALIGNED_ALLOC_SITE(k)                                                                      \
	static SITE void *aligned_alloc_site_##k(size_t align, size_t n)                           \
	{                                                                                          \
		void *p = aligned_alloc(align, n);                                                 \
		BARRIER(p, 1000 + k);                                                              \
		return p;                                                                          \
	}
#define MEMALIGN_SITE(k)                                                                           \
	static SITE void *memalign_site_##k(size_t align, size_t n)                                \
	{                                                                                          \
		void *p = memalign(align, n);                                                      \
		BARRIER(p, 1100 + k);                                                              \
		return p;                                                                          \
	}
#define FREE_SITE(k)                                                                               \
	static SITE void free_site_##k(void *p)                                                    \
	{                                                                                          \
		free(p);                                                                           \
		BARRIER(p, 1200 + k);                                                              \
	}
#define USABLE_SITE(k)                                                                             \
	static SITE size_t usable_site_##k(void *p)                                                \
	{                                                                                          \
		size_t n = malloc_usable_size(p);                                                  \
		BARRIER(n, 1300 + k);                                                              \
		return n;                                                                          \
	}

MALLOC_SITE(0) MALLOC_SITE(1) MALLOC_SITE(2) MALLOC_SITE(3) MALLOC_SITE(4) MALLOC_SITE(5)
CALLOC_SITE(0) CALLOC_SITE(1) CALLOC_SITE(2) CALLOC_SITE(3)
REALLOC_SITE(grow, 0, 200) REALLOC_SITE(grow, 1, 201) REALLOC_SITE(grow, 2, 202)
REALLOC_SITE(grow, 3, 203)
REALLOC_SITE(shrink, 0, 300) REALLOC_SITE(shrink, 1, 301) REALLOC_SITE(shrink, 2, 302)
REALLOC_SITE(shrink, 3, 303)
REALLOC_SITE(run, 0, 400) REALLOC_SITE(run, 1, 401) REALLOC_SITE(run, 2, 402)
REALLOC_SITE(run, 3, 403)
REALLOC_SITE(from_null, 0, 500) REALLOC_SITE(from_null, 1, 501) REALLOC_SITE(from_null, 2, 502)
REALLOC_SITE(move, 0, 600) REALLOC_SITE(move, 1, 601) REALLOC_SITE(move, 2, 602)
REALLOCARRAY_SITE(0) REALLOCARRAY_SITE(1) REALLOCARRAY_SITE(2)
POSIX_MEMALIGN_SITE(0) POSIX_MEMALIGN_SITE(1) POSIX_MEMALIGN_SITE(2)
ALIGNED_ALLOC_SITE(0) ALIGNED_ALLOC_SITE(1) ALIGNED_ALLOC_SITE(2)
MEMALIGN_SITE(0) MEMALIGN_SITE(1) MEMALIGN_SITE(2)
FREE_SITE(0) FREE_SITE(1) FREE_SITE(2) FREE_SITE(3)
USABLE_SITE(0) USABLE_SITE(1)

typedef void *(*alloc_fn)(size_t);
typedef void *(*calloc_fn)(size_t, size_t);
typedef void *(*realloc_fn)(void *, size_t);
typedef void *(*reallocarray_fn)(void *, size_t, size_t);
typedef void *(*aligned_fn)(size_t, size_t);
typedef void (*free_fn)(void *);
typedef size_t (*usable_fn)(void *);

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))
static const alloc_fn malloc_sites[] = {malloc_site_0, malloc_site_1, malloc_site_2,
					malloc_site_3, malloc_site_4, malloc_site_5};
static const calloc_fn calloc_sites[] = {calloc_site_0, calloc_site_1, calloc_site_2,
					 calloc_site_3};
static const realloc_fn grow_sites[] = {grow_site_0, grow_site_1, grow_site_2, grow_site_3};
static const realloc_fn shrink_sites[] = {shrink_site_0, shrink_site_1, shrink_site_2,
					  shrink_site_3};
static const realloc_fn run_sites[] = {run_site_0, run_site_1, run_site_2, run_site_3};
static const realloc_fn from_null_sites[] = {from_null_site_0, from_null_site_1,
					     from_null_site_2};
static const realloc_fn move_sites[] = {move_site_0, move_site_1, move_site_2};
static const reallocarray_fn reallocarray_sites[] = {reallocarray_site_0, reallocarray_site_1,
						     reallocarray_site_2};
static const aligned_fn posix_memalign_sites[] = {posix_memalign_site_0, posix_memalign_site_1,
						  posix_memalign_site_2};
static const aligned_fn aligned_alloc_sites[] = {aligned_alloc_site_0, aligned_alloc_site_1,
						 aligned_alloc_site_2};
static const aligned_fn memalign_sites[] = {memalign_site_0, memalign_site_1, memalign_site_2};
static const free_fn free_sites[] = {free_site_0, free_site_1, free_site_2, free_site_3};
static const usable_fn usable_sites[] = {usable_site_0, usable_site_1};

/* --- Threads, blocks, and the hand-off queue. -------------------------------- */

struct block {
	unsigned char *p;
	size_t size;
	uint64_t tag;
};

struct worker {
	unsigned id;
	uint64_t ops, op; /* op: the one being done, for reports */
	uint64_t rng;
	uint64_t seq;     /* tags handed out */
	uint64_t target;  /* how many live blocks to hover around, for a while */
	struct block live[MAX_LIVE];
	unsigned nlive;
	/* Deterministic: this thread's own work. */
	uint64_t digest, checked_bytes, checked_blocks;
	/* Blocks of any thread freed here after a hand-off: only the sums over all
	 * threads are deterministic. */
	uint64_t taken_bytes, taken_blocks, taken_sum;
};

static struct {
	pthread_mutex_t lock;
	struct block q[QUEUE_CAP];
	unsigned head, count;
} queue = {.lock = PTHREAD_MUTEX_INITIALIZER};

static pthread_mutex_t report_lock = PTHREAD_MUTEX_INITIALIZER;

static __attribute__((noreturn)) void die(int status, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void die(int status, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&report_lock); /* one report, whoever sees trouble first */
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fflush(stderr);
	_exit(status);
}

static uint64_t next(struct worker *w)
{
	/* xorshift64* */
	w->rng ^= w->rng >> 12;
	w->rng ^= w->rng << 25;
	w->rng ^= w->rng >> 27;
	return w->rng * 0x2545f4914f6cdd1dull;
}

static uint64_t below(struct worker *w, uint64_t n)
{
	return (next(w) >> 11) % n;
}

static void note(struct worker *w, uint64_t a, uint64_t b, uint64_t c)
{
	w->digest = mix64(w->digest ^ a);
	w->digest = mix64(w->digest ^ b);
	w->digest = mix64(w->digest ^ c);
}

static uint64_t key_of(uint64_t tag)
{
	return mix64(tag ^ 0x5851f42d4c957f2dull);
}

/* Checks bytes [0, n) of a block against its tag; counts them for the thread. */
static void verify(unsigned who, uint64_t op, const unsigned char *p, size_t n, uint64_t tag)
{
	uint64_t key = key_of(tag);
	size_t bad = check_range(p, 0, n, key);

	if (bad != SIZE_MAX)
		die(3,
		    "stress: CORRUPT thread %u op %" PRIu64 " block %" PRIx64 " byte %zu\n"
		    "stress: expected 0x%02x, found 0x%02x (block of %zu bytes at %p)\n",
		    who, op, tag, bad, pattern_byte(key, bad), p[bad], n, (const void *)p);
}

static void verify_own(struct worker *w, const unsigned char *p, size_t n, uint64_t tag)
{
	verify(w->id, w->op, p, n, tag);
	w->checked_bytes += n;
	w->checked_blocks++;
}

static void *got(struct worker *w, void *p, size_t n, const char *what)
{
	if (!p)
		die(4, "stress: OUT OF MEMORY thread %u op %" PRIu64 " %s of %zu bytes\n", w->id, w->op,
		    what, n);
	return p;
}

static size_t pick_size(struct worker *w)
{
	uint64_t r = below(w, 1000);

	if (r < 860)
		return 1 + below(w, SMALL_MAX);
	if (r < 997)
		return SMALL_MAX + 1 + below(w, MEDIUM_MAX - SMALL_MAX);
	return MEDIUM_MAX + 1 + below(w, LARGE_MAX - MEDIUM_MAX);
}

static uint64_t new_tag(struct worker *w)
{
	return ((uint64_t)(w->id + 1) << 48) | ++w->seq;
}

static void free_block(struct worker *w, unsigned i);

/* A slot for a new block: frees a random one first if the thread is full. */
static struct block *add_block(struct worker *w, void *p, size_t n, uint64_t tag)
{
	if (w->nlive == MAX_LIVE)
		free_block(w, (unsigned)below(w, w->nlive));
	struct block *b = &w->live[w->nlive++];
	*b = (struct block){p, n, tag};
	return b;
}

static void remove_block(struct worker *w, unsigned i)
{
	w->live[i] = w->live[--w->nlive];
}

static void free_block(struct worker *w, unsigned i)
{
	struct block *b = &w->live[i];

	verify_own(w, b->p, b->size, b->tag);
	note(w, 'f', b->size, b->tag);
	free_sites[below(w, COUNT(free_sites))](b->p);
	remove_block(w, i);
}

static void new_filled(struct worker *w, int kind, void *p, size_t n)
{
	uint64_t tag = new_tag(w);

	fill_range(p, 0, n, key_of(tag));
	add_block(w, p, n, tag);
	note(w, (uint64_t)kind, n, tag);
}

/* Reallocates block i to n bytes through f: the whole block is checked before,
 * the kept prefix after, and what is new gets the block's pattern. */
static void resize(struct worker *w, unsigned i, size_t n, realloc_fn f, int kind)
{
	struct block *b = &w->live[i];
	size_t keep = n < b->size ? n : b->size;

	verify_own(w, b->p, b->size, b->tag);
	unsigned char *q = got(w, f(b->p, n), n, "realloc");
	verify_own(w, q, keep, b->tag);
	fill_range(q, keep, n, key_of(b->tag));
	b->p = q;
	b->size = n;
	note(w, (uint64_t)kind, n, b->tag);
}

/* A live block of at most max bytes, tried a few times; or -1. */
static int some_block(struct worker *w, size_t max)
{
	for (int tries = 0; tries < 4 && w->nlive; tries++) {
		unsigned i = (unsigned)below(w, w->nlive);
		if (w->live[i].size <= max)
			return (int)i;
	}
	return -1;
}

/* Checks and frees a block another thread handed off (or this one, or main). */
static void take(struct worker *w, unsigned who, const struct block *b)
{
	verify(who, w->op, b->p, b->size, b->tag);
	w->taken_bytes += b->size;
	w->taken_blocks++;
	w->taken_sum += mix64(b->tag ^ b->size);
	/* Which site frees it must not use the thread's random numbers. */
	free_sites[mix64(b->tag) % COUNT(free_sites)](b->p);
}

enum op {
	OP_MALLOC,
	OP_CALLOC,
	OP_GROW,
	OP_SHRINK,
	OP_RUN,
	OP_FROM_NULL,
	OP_MOVE,
	OP_ALIGNED,
	OP_REALLOCARRAY,
	OP_FREE,
	OP_USABLE,
	OP_HANDOFF,
	OP_TAKE,
	OP_COUNT
};

/* Weights while below the thread's current target of live blocks, and above. */
static const unsigned weights_up[OP_COUNT] = {
    [OP_MALLOC] = 18, [OP_CALLOC] = 6,  [OP_GROW] = 8,         [OP_SHRINK] = 6,
    [OP_RUN] = 5,     [OP_FROM_NULL] = 3, [OP_MOVE] = 2,       [OP_ALIGNED] = 6,
    [OP_REALLOCARRAY] = 3, [OP_FREE] = 12, [OP_USABLE] = 3,    [OP_HANDOFF] = 2,
    [OP_TAKE] = 3,
};
static const unsigned weights_down[OP_COUNT] = {
    [OP_MALLOC] = 8,  [OP_CALLOC] = 3,  [OP_GROW] = 6,         [OP_SHRINK] = 6,
    [OP_RUN] = 5,     [OP_FROM_NULL] = 1, [OP_MOVE] = 1,       [OP_ALIGNED] = 3,
    [OP_REALLOCARRAY] = 3, [OP_FREE] = 40, [OP_USABLE] = 3,    [OP_HANDOFF] = 2,
    [OP_TAKE] = 3,
};

static enum op pick_op(struct worker *w)
{
	const unsigned *weights = w->nlive < w->target ? weights_up : weights_down;
	unsigned total = 0;

	for (int k = 0; k < OP_COUNT; k++)
		total += weights[k];
	uint64_t r = below(w, total);
	for (int k = 0; k < OP_COUNT; k++) {
		if (r < weights[k])
			return (enum op)k;
		r -= weights[k];
	}
	return OP_MALLOC;
}

static void do_malloc(struct worker *w)
{
	size_t n = pick_size(w);
	void *p = got(w, malloc_sites[below(w, COUNT(malloc_sites))](n), n, "malloc");
	new_filled(w, OP_MALLOC, p, n);
}

static void do_calloc(struct worker *w)
{
	size_t n = pick_size(w), elem = (size_t)1 << below(w, 4), count = (n + elem - 1) / elem;
	unsigned char *p = got(w, calloc_sites[below(w, COUNT(calloc_sites))](count, elem),
			       count * elem, "calloc");
	uint64_t tag = new_tag(w);

	n = count * elem;
	for (size_t i = 0; i < n; i++)
		if (p[i])
			die(3,
			    "stress: CORRUPT thread %u op %" PRIu64 " block %" PRIx64 " byte %zu\n"
			    "stress: calloc gave 0x%02x, not zero (block of %zu bytes at %p)\n",
			    w->id, w->op, tag, i, p[i], n, (void *)p);
	w->checked_bytes += n;
	w->checked_blocks++;
	fill_range(p, 0, n, key_of(tag));
	add_block(w, p, n, tag);
	note(w, OP_CALLOC, n, tag);
}

static void do_grow(struct worker *w)
{
	if (!w->nlive) {
		do_malloc(w);
		return;
	}
	unsigned i = (unsigned)below(w, w->nlive);
	size_t old = w->live[i].size;
	/* Mostly by a little, sometimes up to twice the size. */
	size_t n = old + 1 + below(w, below(w, 4) ? 64 + old / 8 : old);
	if (n > LARGE_MAX)
		n = old < LARGE_MAX ? LARGE_MAX : old + 1;
	resize(w, i, n, grow_sites[below(w, COUNT(grow_sites))], OP_GROW);
}

static void do_shrink(struct worker *w)
{
	if (!w->nlive) {
		do_malloc(w);
		return;
	}
	unsigned i = (unsigned)below(w, w->nlive);
	size_t old = w->live[i].size;
	/* Mostly by a little (stays in place), sometimes to anything smaller. */
	size_t n = below(w, 4) ? old - below(w, old / 4 + 1) : 1 + below(w, old);
	if (n == 0)
		n = 1;
	resize(w, i, n, shrink_sites[below(w, COUNT(shrink_sites))], OP_SHRINK);
}

/* Many small reallocs by +-1..8 bytes around one size, from one site (glibc keeps
 * them in place), sometimes followed by a move to a much larger size from the
 * same site. */
static void do_run(struct worker *w)
{
	realloc_fn f = run_sites[below(w, COUNT(run_sites))];
	int i = some_block(w, RUN_MAX_SIZE);

	if (i < 0) {
		/* Starts a block of its own, from the run's site. */
		size_t n = 1 + below(w, below(w, 8) ? SMALL_MAX : RUN_MAX_SIZE);
		void *p = got(w, f(NULL, n), n, "realloc(NULL)");
		new_filled(w, OP_RUN, p, n);
		i = (int)(w->nlive - 1);
	}
	size_t base = w->live[i].size;
	uint64_t steps = below(w, 8) ? 2 + below(w, 62) : 64 + below(w, 448);
	for (uint64_t s = 0; s < steps; s++) {
		size_t delta = 1 + below(w, 8);
		size_t n = below(w, 2) ? base + delta : (base > delta ? base - delta : 1 + delta);
		resize(w, (unsigned)i, n, f, OP_RUN);
	}
	if (!below(w, 4)) {
		size_t n = base * 4 + 4096 + below(w, MEDIUM_MAX);
		resize(w, (unsigned)i, n, f, OP_MOVE);
	}
}

static void do_from_null(struct worker *w)
{
	size_t n = pick_size(w);
	void *p = got(w, from_null_sites[below(w, COUNT(from_null_sites))](NULL, n), n,
		      "realloc(NULL)");
	new_filled(w, OP_FROM_NULL, p, n);
}

static void do_move(struct worker *w)
{
	if (!w->nlive) {
		do_malloc(w);
		return;
	}
	unsigned i = (unsigned)below(w, w->nlive);
	size_t old = w->live[i].size;
	size_t n = old * 4 + 4096 + below(w, MEDIUM_MAX);
	if (n > LARGE_MAX)
		n = old < LARGE_MAX ? LARGE_MAX : old + 1 + below(w, 4096);
	resize(w, i, n, move_sites[below(w, COUNT(move_sites))], OP_MOVE);
}

static void do_aligned(struct worker *w)
{
	size_t align = (size_t)16 << below(w, 9); /* 16 .. 4096 */
	size_t n = below(w, 4) ? 1 + below(w, SMALL_MAX) : pick_size(w);
	uint64_t how = below(w, 3);
	void *p;

	if (how == 0) {
		p = posix_memalign_sites[below(w, COUNT(posix_memalign_sites))](align, n);
	} else if (how == 1) {
		n = (n + align - 1) / align * align; /* C11 asks for a multiple */
		p = aligned_alloc_sites[below(w, COUNT(aligned_alloc_sites))](align, n);
	} else {
		p = memalign_sites[below(w, COUNT(memalign_sites))](align, n);
	}
	got(w, p, n, "aligned allocation");
	if ((uintptr_t)p & (align - 1))
		die(3, "stress: MISALIGNED thread %u op %" PRIu64 " %p not aligned to %zu\n", w->id,
		    w->op, p, align);
	new_filled(w, (int)(OP_ALIGNED * 16 + how), p, n);
	note(w, align, 0, 0);
}

static void do_reallocarray(struct worker *w)
{
	size_t elem = (size_t)1 << below(w, 5);
	size_t count = 1 + below(w, (below(w, 8) ? SMALL_MAX : MEDIUM_MAX) / elem);
	reallocarray_fn f = reallocarray_sites[below(w, COUNT(reallocarray_sites))];

	if (!w->nlive || !below(w, 8)) {
		void *p = got(w, f(NULL, count, elem), count * elem, "reallocarray(NULL)");
		new_filled(w, OP_REALLOCARRAY, p, count * elem);
		return;
	}
	unsigned i = (unsigned)below(w, w->nlive);
	struct block *b = &w->live[i];
	size_t n = count * elem, keep = n < b->size ? n : b->size;

	verify_own(w, b->p, b->size, b->tag);
	unsigned char *q = got(w, f(b->p, count, elem), n, "reallocarray");
	verify_own(w, q, keep, b->tag);
	fill_range(q, keep, n, key_of(b->tag));
	b->p = q;
	b->size = n;
	note(w, OP_REALLOCARRAY, n, b->tag);
}

static void do_usable(struct worker *w)
{
	if (!w->nlive)
		return;
	struct block *b = &w->live[below(w, w->nlive)];
	size_t n = usable_sites[below(w, COUNT(usable_sites))](b->p);
	/* The size itself differs between allocators: not part of the digest. */
	if (n < b->size)
		die(3,
		    "stress: USABLE thread %u op %" PRIu64 " block %" PRIx64
		    " malloc_usable_size %zu < %zu\n",
		    w->id, w->op, b->tag, n, b->size);
}

static void do_handoff(struct worker *w)
{
	if (!w->nlive)
		return;
	unsigned i = (unsigned)below(w, w->nlive);
	struct block b = w->live[i];

	verify_own(w, b.p, b.size, b.tag);
	note(w, OP_HANDOFF, b.size, b.tag);
	remove_block(w, i);
	pthread_mutex_lock(&queue.lock);
	int queued = queue.count < QUEUE_CAP;
	if (queued)
		queue.q[(queue.head + queue.count++) % QUEUE_CAP] = b;
	pthread_mutex_unlock(&queue.lock);
	if (!queued) /* nobody took enough: this thread does what a taker would */
		take(w, w->id, &b);
}

/* Takes up to four handed-off blocks, whichever are there: the thread's random
 * sequence and digest do not depend on them. */
static void do_take(struct worker *w)
{
	for (int k = 0; k < 4; k++) {
		struct block b;
		pthread_mutex_lock(&queue.lock);
		int have = queue.count > 0;
		if (have) {
			b = queue.q[queue.head];
			queue.head = (queue.head + 1) % QUEUE_CAP;
			queue.count--;
		}
		pthread_mutex_unlock(&queue.lock);
		if (!have)
			return;
		take(w, w->id, &b);
	}
}

/* STRESS_FORKS=1: whether the threads fork (do_fork). */
static int forks;

/* A child forked amid the work, as a process pool's worker is: it checks its
 * copy of the thread's blocks, allocates and frees a few of its own, and ends
 * with status 0. Or, one time in two, the parent ends it with SIGTERM at once,
 * before it may have run, and it must end by the signal: a child that lives on
 * through its work and 3 s more ends with status 9. (memplan once took such a
 * signal for one sent to the parent, and dropped it.) */
static void do_fork(struct worker *w)
{
	const int end_it = (int)below(w, 2);
	const size_t n = pick_size(w);
	int status;
	pid_t pid = fork();

	if (pid < 0)
		die(4, "stress: fork: %s\n", strerror(errno));
	if (pid == 0) {
		for (unsigned i = 0; i < w->nlive; i++)
			verify(w->id, w->op, w->live[i].p, w->live[i].size, w->live[i].tag);
		for (unsigned k = 0; k < 8; k++) {
			const uint64_t key = key_of(w->seq + k);
			unsigned char *p = malloc_sites[k % COUNT(malloc_sites)](n + k);
			if (!p)
				_exit(4);
			fill_range(p, 0, n + k, key);
			if (check_range(p, 0, n + k, key) != SIZE_MAX)
				_exit(3);
			free_sites[k % COUNT(free_sites)](p);
		}
		if (end_it) {
			const struct timespec wait = {3, 0};
			nanosleep(&wait, NULL);
			_exit(9);
		}
		_exit(0);
	}
	if (end_it)
		kill(pid, SIGTERM);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			die(4, "stress: waitpid: %s\n", strerror(errno));
	if (end_it ? !(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM)
		   : !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
		die(5, "stress: thread %u op %" PRIu64 ": the forked child %s (status %#x)\n",
		    w->id, w->op, end_it ? "lived on after SIGTERM" : "failed", (unsigned)status);
	note(w, 'f', end_it, n);
}

static void verify_all(struct worker *w)
{
	for (unsigned i = 0; i < w->nlive; i++)
		verify_own(w, w->live[i].p, w->live[i].size, w->live[i].tag);
	note(w, 'v', w->nlive, 0);
}

static void *work(void *arg)
{
	struct worker *w = arg;

	w->target = 1 + below(w, MAX_LIVE);
	for (w->op = 0; w->op < w->ops; w->op++) {
		if (w->op % 1024 == 1023)
			w->target = 1 + below(w, MAX_LIVE);
		switch (pick_op(w)) {
		case OP_MALLOC: do_malloc(w); break;
		case OP_CALLOC: do_calloc(w); break;
		case OP_GROW: do_grow(w); break;
		case OP_SHRINK: do_shrink(w); break;
		case OP_RUN: do_run(w); break;
		case OP_FROM_NULL: do_from_null(w); break;
		case OP_MOVE: do_move(w); break;
		case OP_ALIGNED: do_aligned(w); break;
		case OP_REALLOCARRAY: do_reallocarray(w); break;
		case OP_FREE:
			if (w->nlive)
				free_block(w, (unsigned)below(w, w->nlive));
			break;
		case OP_USABLE: do_usable(w); break;
		case OP_HANDOFF: do_handoff(w); break;
		case OP_TAKE: do_take(w); break;
		case OP_COUNT: break;
		}
		if (w->op % VERIFY_EVERY == VERIFY_EVERY - 1)
			verify_all(w);
		if (forks && w->op % 4096 == 2047 && !below(w, 4))
			do_fork(w);
	}
	verify_all(w);
	while (w->nlive)
		free_block(w, w->nlive - 1); /* checked once more on the way out */
	return NULL;
}

static void usage(FILE *to)
{
	fprintf(to,
		"usage: stress SEED THREADS OPS\n"
		"  SEED: 0..2^64-1, or 'env' for $STRESS_SEED; THREADS: 1..%d;\n"
		"  OPS: operations per thread. STRESS_FORKS=1: the threads fork too.\n"
		"  Prints one line that depends only on the arguments; on corruption\n"
		"  prints 'stress: CORRUPT ...' on stderr and exits 3.\n",
		MAX_THREADS);
}

static int number(const char *s, uint64_t *out)
{
	char *end;

	if (!*s || *s == '-')
		return -1;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

int main(int argc, char **argv)
{
	static struct worker workers[MAX_THREADS];
	pthread_t tid[MAX_THREADS];
	uint64_t seed, threads, ops;

	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage(stdout);
		return 0;
	}
	const char *seed_text = argc > 1 && !strcmp(argv[1], "env") ? getenv("STRESS_SEED") : NULL;
	if (argc > 1 && !seed_text && !strcmp(argv[1], "env")) {
		fprintf(stderr, "stress: SEED is 'env' but STRESS_SEED is not set\n");
		return 2;
	}
	if (argc != 4 || number(seed_text ? seed_text : argv[1], &seed) || number(argv[2], &threads) ||
	    number(argv[3], &ops) || threads < 1 || threads > MAX_THREADS) {
		usage(stderr);
		return 2;
	}
	forks = getenv("STRESS_FORKS") && !strcmp(getenv("STRESS_FORKS"), "1");
	for (unsigned t = 0; t < threads; t++) {
		struct worker *w = &workers[t];
		w->id = t;
		w->ops = ops;
		w->rng = mix64(seed ^ mix64(0x9e3779b97f4a7c15ull * (t + 1)));
		if (!w->rng)
			w->rng = 1;
		w->digest = mix64(seed + t);
		int err = pthread_create(&tid[t], NULL, work, w);
		if (err) {
			fprintf(stderr, "stress: pthread_create: %s\n", strerror(err));
			return 4;
		}
	}
	uint64_t digest = mix64(seed ^ threads ^ (ops << 8)), bytes = 0, blocks = 0, taken_sum = 0;
	for (unsigned t = 0; t < threads; t++) {
		pthread_join(tid[t], NULL);
		struct worker *w = &workers[t];
		digest = mix64(digest ^ w->digest);
		bytes += w->checked_bytes + w->taken_bytes;
		blocks += w->checked_blocks + w->taken_blocks;
		taken_sum += w->taken_sum;
	}
	/* What nobody took: main checks and frees it. */
	struct worker last = {.id = (unsigned)threads, .op = ops};
	while (queue.count) {
		take(&last, last.id, &queue.q[queue.head]);
		queue.head = (queue.head + 1) % QUEUE_CAP;
		queue.count--;
	}
	bytes += last.taken_bytes;
	blocks += last.taken_blocks;
	taken_sum += last.taken_sum;
	digest = mix64(digest ^ taken_sum);
	printf("stress seed=%" PRIu64 " threads=%" PRIu64 " ops=%" PRIu64 " checked_bytes=%" PRIu64
	       " checked_blocks=%" PRIu64 " digest=%016" PRIx64 "\n",
	       seed, threads, ops, bytes, blocks, digest);
	return 0;
}
