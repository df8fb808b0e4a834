/* fork with and without exec, in record and replay: the child frees blocks it
 * inherited (arena blocks in replay), allocates its own, and the parent's blocks
 * stay intact. Also forks while other threads allocate, which deadlocks if the
 * allocator's locks are not reset in the child. Prints a summary; exits 1 on
 * corruption or a failed child. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define BLOCKS 200

static volatile int stop;

static void *churn(void *arg)
{
	while (!stop)
		free(malloc(64));
	return arg;
}

static int check(char **b, int n)
{
	for (int i = 0; i < n; i++)
		for (int k = 0; k < 100 + i; k++)
			if (b[i][k] != (char)i)
				return 0;
	return 1;
}

static int wait_ok(pid_t pid)
{
	int status;

	return waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int main(void)
{
	char *b[BLOCKS];
	pthread_t t;
	int ok = 1;

	for (int i = 0; i < BLOCKS; i++) {
		b[i] = malloc(100 + (size_t)i);
		memset(b[i], i, 100 + (size_t)i);
	}
	pthread_create(&t, NULL, churn, NULL);

	for (int round = 0; round < 20; round++) {
		pid_t pid = fork();
		if (pid == 0) {
			/* Child: inherited blocks intact, freeable; new ones work. */
			int good = check(b, BLOCKS);
			for (int i = 0; i < BLOCKS; i += 2)
				free(b[i]);
			for (int i = 0; i < 1000; i++)
				free(malloc(16 + (size_t)i));
			_exit(good ? 0 : 1);
		}
		ok &= wait_ok(pid);
	}

	pid_t pid = fork();
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", "exit 0", (char *)NULL);
		_exit(127);
	}
	ok &= wait_ok(pid);

	stop = 1;
	pthread_join(t, NULL);
	ok &= check(b, BLOCKS);
	for (int i = 0; i < BLOCKS; i++)
		free(b[i]);
	printf("forker %s\n", ok ? "ok" : "FAILED");
	return ok ? 0 : 1;
}
