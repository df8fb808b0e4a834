/* THREADS threads, started together at a barrier, each keep a ring of blocks
 * from two call sites and replace one at random ROUNDS times, then wait for the
 * others before freeing their rings. So the threads' blocks are all alive side
 * by side however the scheduler runs them, which is when a recording gives each
 * thread a region of the arena of its own. Deterministic per thread.
 *
 * With THREAD_RINGS_TURNS=1 in the environment the threads, all alive, take
 * turns instead: each runs and frees its ring while the others wait, as a busy
 * machine may schedule them. Same output, same allocations per thread.
 * usage: thread_rings THREADS ROUNDS; prints a checksum. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RING 256

static pthread_barrier_t together;
static int take_turns;
static pthread_mutex_t turn_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t turn_changed = PTHREAD_COND_INITIALIZER;
static unsigned turn;

/* Before the work: all together, or, once all are there, wait for this
 * thread's turn. (Without the barrier the first thread could run its turn and
 * end before main had created the last: then they were not all alive at once,
 * and the recording rightly gave them no regions of their own.) */
static void begin(unsigned id)
{
	pthread_barrier_wait(&together);
	if (!take_turns)
		return;
	pthread_mutex_lock(&turn_lock);
	while (turn != id)
		pthread_cond_wait(&turn_changed, &turn_lock);
	pthread_mutex_unlock(&turn_lock);
}

/* Between the work and freeing the ring: wait for all, unless taking turns. */
static void middle(void)
{
	if (!take_turns)
		pthread_barrier_wait(&together);
}

/* After freeing the ring: the next thread's turn, and no thread ends before
 * all have had theirs. */
static void end(void)
{
	if (!take_turns)
		return;
	pthread_mutex_lock(&turn_lock);
	turn++;
	pthread_cond_broadcast(&turn_changed);
	pthread_mutex_unlock(&turn_lock);
	pthread_barrier_wait(&together);
}

struct worker {
	unsigned id, rounds;
	uint64_t checksum;
};

static __attribute__((noinline)) char *site_node(size_t n)
{
	return malloc(n);
}

static __attribute__((noinline)) char *site_text(size_t n)
{
	return malloc(n);
}

static void *run(void *arg)
{
	struct worker *w = arg;
	char *ring[RING] = {0};
	uint64_t seed = 0x9e3779b97f4a7c15ull * (w->id + 1);

	begin(w->id);
	for (unsigned r = 0; r < w->rounds; r++) {
		seed = seed * 6364136223846793005u + 1442695040888963407u;
		/* A few sizes only: each thread's region packs tightly, so the regions
		 * cost little arena and the recording keeps them. */
		size_t n = 32 * (1 + (size_t)(seed >> 40) % 4);
		unsigned k = (unsigned)(seed >> 20) % RING;
		char *p = (seed >> 63) ? site_node(n) : site_text(n);
		if (!p)
			exit(1);
		memset(p, (int)(r & 0xff), n);
		w->checksum += (unsigned char)p[n - 1] + n;
		free(ring[k]);
		ring[k] = p;
	}
	middle();
	for (unsigned k = 0; k < RING; k++)
		free(ring[k]);
	end();
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned threads = argc > 1 ? (unsigned)atoi(argv[1]) : 4;
	unsigned rounds = argc > 2 ? (unsigned)atoi(argv[2]) : 20000;
	pthread_t t[64];
	struct worker w[64];
	uint64_t sum = 0;

	if (threads < 1 || threads > 64)
		return 2;
	take_turns = getenv("THREAD_RINGS_TURNS") && !strcmp(getenv("THREAD_RINGS_TURNS"), "1");
	pthread_barrier_init(&together, NULL, threads);
	for (unsigned i = 0; i < threads; i++) {
		w[i] = (struct worker){i, rounds, 0};
		if (pthread_create(&t[i], NULL, run, &w[i]))
			return 1;
	}
	for (unsigned i = 0; i < threads; i++) {
		pthread_join(t[i], NULL);
		sum += w[i].checksum;
	}
	printf("%llu\n", (unsigned long long)sum);
	return 0;
}
