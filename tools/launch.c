/* Running the command, see launch.h. */
#define _GNU_SOURCE
#include "launch.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "preload_path.h"

int launch_add_preload(void)
{
	char lib[PATH_MAX], *value;
	const char *old = getenv("LD_PRELOAD");

	if (preload_path_find(lib, sizeof(lib)) < 0) {
		fprintf(stderr, "memplan: %s: preload library not found\n", lib);
		exit(1);
	}
	if (old && *old) {
		if (asprintf(&value, "%s:%s", lib, old) < 0) {
			fprintf(stderr, "memplan: out of memory\n");
			exit(1);
		}
	} else {
		value = strdup(lib);
	}
	setenv("LD_PRELOAD", value, 1);
	free(value);
	return 0;
}

void launch_set_mode(const char *mode, const char *plan, uint64_t record_id)
{
	char id[21];

	snprintf(id, sizeof(id), "%020llu", (unsigned long long)record_id);
	setenv("MEMPLAN_MODE", mode, 1);
	setenv("MEMPLAN_PLAN", plan, 1);
	setenv("MEMPLAN_RECORD_ID", id, 1);
}

int launch_absolute_path(const char *path, char *out, size_t cap)
{
	char cwd[PATH_MAX];

	if (path[0] == '/')
		return (size_t)snprintf(out, cap, "%s", path) < cap ? 0 : -ENAMETOOLONG;
	if (!getcwd(cwd, sizeof(cwd)))
		return -errno;
	return (size_t)snprintf(out, cap, "%s/%s", cwd, path) < cap ? 0 : -ENAMETOOLONG;
}

/* The command being waited for, for the signal handler. */
static volatile pid_t child_pid;

static const int passed_on[] = {SIGTERM, SIGHUP, SIGINT, SIGQUIT};
#define PASSED_ON_COUNT (sizeof(passed_on) / sizeof(passed_on[0]))

static void pass_on(int sig)
{
	int saved = errno;

	if (child_pid > 0)
		kill(child_pid, sig);
	errno = saved;
}

int launch_run(char **argv)
{
	struct sigaction forward = {.sa_handler = pass_on, .sa_flags = SA_RESTART};
	struct sigaction old[PASSED_ON_COUNT];
	sigset_t block, before;
	int status;
	pid_t pid;

	/* Blocked across fork: a signal before the handler knows the child waits. */
	sigemptyset(&block);
	for (size_t i = 0; i < PASSED_ON_COUNT; i++)
		sigaddset(&block, passed_on[i]);
	sigprocmask(SIG_BLOCK, &block, &before);
	sigemptyset(&forward.sa_mask);
	for (size_t i = 0; i < PASSED_ON_COUNT; i++)
		sigaction(passed_on[i], NULL, &old[i]);
	pid = fork();
	if (pid < 0) {
		sigprocmask(SIG_SETMASK, &before, NULL);
		fprintf(stderr, "memplan: cannot fork: %s\n", strerror(errno));
		return 127;
	}
	if (pid == 0) {
		sigprocmask(SIG_SETMASK, &before, NULL);
		execvp(argv[0], argv);
		fprintf(stderr, "memplan: %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	child_pid = pid;
	for (size_t i = 0; i < PASSED_ON_COUNT; i++)
		if (old[i].sa_handler != SIG_IGN) /* nohup and the like: stays ignored */
			sigaction(passed_on[i], &forward, NULL);
	sigprocmask(SIG_SETMASK, &before, NULL);
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "memplan: waitpid: %s\n", strerror(errno));
			status = 127 << 8;
			break;
		}
	}
	child_pid = 0;
	for (size_t i = 0; i < PASSED_ON_COUNT; i++)
		sigaction(passed_on[i], &old[i], NULL);
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
}
