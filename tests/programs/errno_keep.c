/* Sets errno before allocation calls, and before fork, and counts the calls
 * that succeeded and changed it: glibc's free never does (POSIX 2024), its
 * malloc and realloc do not when they succeed, and fork returns to the child
 * with errno as it was. With a second argument, uses up its descriptors first,
 * so that whatever memplan must open (the plan, for entries past those read
 * at start) fails. Prints the counts and the number of rounds. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static int changed_malloc, changed_free, changed_realloc, changed_fork;

#define SITE(n)                                                                                    \
	static void *site##n(size_t s)                                                             \
	{                                                                                          \
		errno = 4242;                                                                      \
		void *p = malloc(s);                                                               \
		if (p && errno != 4242)                                                            \
			changed_malloc++;                                                          \
		return p;                                                                          \
	}
SITE(0) SITE(1) SITE(2) SITE(3) SITE(4) SITE(5) SITE(6) SITE(7)

/* A child forked without exec: under replay it looks for a plan of its own. */
static void fork_once(void)
{
	errno = 4545;
	pid_t pid = fork();
	if (pid == 0)
		_exit(errno == 4545 ? 0 : 1);
	int status;
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		exit(2);
	changed_fork += WEXITSTATUS(status) != 0;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 100000;
	void *(*sites[])(size_t) = {site0, site1, site2, site3, site4, site5, site6, site7};
	void *keep[256] = {0};

	if (argc > 2)
		while (fopen("/dev/null", "r"))
			;
	for (int i = 0; i < rounds; i++) {
		int k = (i * 7919) % 256;
		if (i % 25000 == 0)
			fork_once();
		if (!keep[k]) {
			keep[k] = sites[i % 8](16 + (size_t)(i * 13 % 2000));
			continue;
		}
		errno = 4343;
		if (i % 3) {
			free(keep[k]);
			changed_free += errno != 4343;
			keep[k] = NULL;
			continue;
		}
		void *q = realloc(keep[k], 10 + (size_t)(i % 900));
		if (q) {
			changed_realloc += errno != 4343;
			keep[k] = q;
		}
	}
	printf("%d rounds; errno changed by malloc %d, free %d, realloc %d, fork %d\n", rounds,
	       changed_malloc, changed_free, changed_realloc, changed_fork);
	return 0;
}
