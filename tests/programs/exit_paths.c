/* Allocates from a few call sites, then leaves the process in the way named by
 * argv[1]: return, exit, _exit, _Exit, abort, segv, term (SIGTERM to itself),
 * exec (execv /bin/true), or execlp (execlp true). Every way must leave a complete
 * plan behind when recorded. Keeps ALLOCS blocks live at the end (never freed). */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ALLOCS 100

static __attribute__((noinline)) void *keep(size_t n)
{
	return malloc(n);
}

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "return";
	static void *live[ALLOCS];

	for (int i = 0; i < 1000; i++)
		free(malloc(32 + (size_t)i % 100));
	for (int i = 0; i < ALLOCS; i++) {
		live[i] = keep(1000 + (size_t)i);
		memset(live[i], i, 1000 + (size_t)i);
	}
	fflush(stdout);
	if (!strcmp(how, "exit"))
		exit(3);
	if (!strcmp(how, "_exit"))
		_exit(4);
	if (!strcmp(how, "_Exit"))
		_Exit(5);
	if (!strcmp(how, "abort"))
		abort();
	if (!strcmp(how, "segv"))
		raise(SIGSEGV);
	if (!strcmp(how, "term"))
		raise(SIGTERM);
	if (!strcmp(how, "exec")) {
		char *args[] = {"true", NULL};
		execv("/bin/true", args);
		return 99;
	}
	if (!strcmp(how, "execlp")) {
		execlp("true", "true", (char *)NULL);
		return 99;
	}
	return 0;
}
