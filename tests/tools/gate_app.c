/* A small server-like program for the memory-gate tests (test-diff-check.sh),
 * built there in several versions:
 *   -DVERSION=2  a session takes more memory: 16 more bytes in session_open's
 *                own allocation, 128 more through its inlined helper
 *                session_buffer;
 *   -DMOVED      the same behaviour with a function added and the code below
 *                it moved down (every line number changes);
 *   -DFORKED     the requests handled in a child forked without exec, as a
 *                pre-forking server's.
 * Deterministic: the same allocations, in the same order, on every run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef MOVED
/* Added in the "moved" build: never called with an argument that allocates. */
__attribute__((noinline)) int moved_helper(int x)
{
	char *p = x > 1000000 ? malloc((size_t)x) : NULL;
	int r = p ? p[0] : x;

	free(p);
	return r;
}
#define MOVED_CALL(x) moved_helper(x)
#else
#define MOVED_CALL(x) (x)
#endif

#if VERSION == 2
#define SESSION_EXTRA_BYTES 16
#define BUFFER_EXTRA_BYTES  128
#else
#define SESSION_EXTRA_BYTES 0
#define BUFFER_EXTRA_BYTES  0
#endif

#define SESSIONS 40
#define REQUESTS 400

struct session {
	int id;
	char *buffer;
	size_t buffer_bytes;
};

static struct session *sessions[SESSIONS];
static char **cache;

/* A session's buffer: inlined into session_open (unless built -fno-inline). */
static inline char *session_buffer(size_t bytes)
{
	char *p = malloc(bytes);
	if (!p)
		abort();
	memset(p, 'b', bytes);
	return p;
}

__attribute__((noinline)) static struct session *session_open(int id)
{
	struct session *s = malloc(sizeof(*s) + SESSION_EXTRA_BYTES);
	if (!s)
		abort();
	s->id = id;
	s->buffer_bytes = 256 + BUFFER_EXTRA_BYTES;
	s->buffer = session_buffer(s->buffer_bytes);
	return s;
}

__attribute__((noinline)) static void cache_create(size_t slots)
{
	cache = calloc(slots, sizeof(*cache));
	if (!cache)
		abort();
}

/* A request: a temporary copy of the session's buffer, freed when done. */
__attribute__((noinline)) static unsigned handle_request(int n)
{
	struct session *s = sessions[n % SESSIONS];
	size_t bytes = 64 + (size_t)(n % 7) * 32;
	char *copy = malloc(bytes);
	unsigned sum = 0;

	if (!copy)
		abort();
	memcpy(copy, s->buffer, bytes);
	for (size_t i = 0; i < bytes; i += 16)
		sum += (unsigned char)copy[i];
	free(copy);
	return sum;
}

int main(void)
{
	unsigned total = 0;

	cache_create(64);
	for (int i = 0; i < SESSIONS; i++)
		sessions[i] = session_open(MOVED_CALL(i));
#ifdef FORKED
	pid_t pid = fork();
	if (pid < 0)
		abort();
	if (pid > 0) {
		waitpid(pid, NULL, 0);
		goto done;
	}
#endif
	for (int n = 0; n < REQUESTS; n++)
		total += handle_request(n);
	printf("%u\n", total);
#ifdef FORKED
	fflush(stdout);
	_exit(0);
done:
#endif
	for (int i = 0; i < SESSIONS; i++) {
		free(sessions[i]->buffer);
		free(sessions[i]);
	}
	free(cache);
	return 0;
}
