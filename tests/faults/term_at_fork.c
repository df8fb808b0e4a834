/* Forks children and sends each SIGTERM at once, before it has run, as a
 * process pool's terminate does to a worker it has only just started (Python's
 * multiprocessing.Pool on leaving its `with` block). Every child must end by
 * the signal: one that lives on would never end, as the pool's worker that
 * waits on a lock its dead sibling held.
 *
 *   term_at_fork ROUNDS default  the default action: the child ends by SIGTERM
 *   term_at_fork ROUNDS handler  a handler of the program's: it ends the child
 *                                with status 7
 *
 * Parent and children share one CPU, so that the parent runs on after fork and
 * signals the child before it leaves the kernel. A child the signal did not
 * reach ends by itself after 300 ms, with status 0. Prints how many of the
 * children lived on, and exits 1 if any did. */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void on_term(int sig)
{
	(void)sig;
	_exit(7);
}

int main(int argc, char **argv)
{
	const int rounds = argc > 1 ? atoi(argv[1]) : 20;
	const int handler = argc > 2 && !strcmp(argv[2], "handler");
	cpu_set_t one;
	int lived = 0;

	if (handler)
		signal(SIGTERM, on_term);
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	if (sched_setaffinity(0, sizeof(one), &one) < 0)
		perror("sched_setaffinity"); /* the race is only less likely */
	for (int i = 0; i < rounds; i++) {
		int status;
		pid_t pid = fork();

		if (pid < 0) {
			perror("fork");
			return 2;
		}
		if (pid == 0) {
			const struct timespec wait = {0, 300 * 1000 * 1000};
			nanosleep(&wait, NULL);
			_exit(0);
		}
		kill(pid, SIGTERM);
		if (waitpid(pid, &status, 0) != pid) {
			perror("waitpid");
			return 2;
		}
		const int ended = handler ? WIFEXITED(status) && WEXITSTATUS(status) == 7
					  : WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM;
		lived += !ended;
	}
	printf("%d of %d children lived on after SIGTERM\n", lived, rounds);
	return lived ? 1 : 0;
}
