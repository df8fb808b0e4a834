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

int launch_absolute_path(const char *path, char *out, size_t cap)
{
	char cwd[PATH_MAX];

	if (path[0] == '/')
		return (size_t)snprintf(out, cap, "%s", path) < cap ? 0 : -ENAMETOOLONG;
	if (!getcwd(cwd, sizeof(cwd)))
		return -errno;
	return (size_t)snprintf(out, cap, "%s/%s", cwd, path) < cap ? 0 : -ENAMETOOLONG;
}

int launch_run(char **argv)
{
	struct sigaction ignore = {.sa_handler = SIG_IGN}, old_int, old_quit;
	int status;
	pid_t pid;

	sigemptyset(&ignore.sa_mask);
	sigaction(SIGINT, &ignore, &old_int);
	sigaction(SIGQUIT, &ignore, &old_quit);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "memplan: cannot fork: %s\n", strerror(errno));
		return 127;
	}
	if (pid == 0) {
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGQUIT, &old_quit, NULL);
		execvp(argv[0], argv);
		fprintf(stderr, "memplan: %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "memplan: waitpid: %s\n", strerror(errno));
			return 127;
		}
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
}
