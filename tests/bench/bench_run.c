/* Runs one command and reports its wall time and peak resident set, for
 * scripts/bench.sh. /usr/bin/time prints elapsed time in hundredths of a second;
 * this uses CLOCK_MONOTONIC and wait4's rusage so short runs are measured too.
 *
 * usage: bench-run OUT CMD [ARGS...]
 * Appends one line "WALL_SECONDS MAXRSS_KIB STATUS CPU_SECONDS" to OUT (CPU time is
 * user plus system time of the command and its waited-for descendants: on a busy
 * machine it grows far less than wall time). The command's stdin,
 * stdout and stderr are inherited. Exits with the command's status (128+signal if
 * it was killed). The peak RSS is the largest of the command's own process (across
 * exec) and of any of its descendants it waited for. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: bench-run OUT CMD [ARGS...]\n");
		return 2;
	}
	FILE *out = fopen(argv[1], "a");
	if (!out) {
		fprintf(stderr, "bench-run: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}

	double t0 = now_seconds();
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "bench-run: fork: %s\n", strerror(errno));
		return 1;
	}
	if (pid == 0) {
		execvp(argv[2], argv + 2);
		fprintf(stderr, "bench-run: %s: %s\n", argv[2], strerror(errno));
		_exit(127);
	}

	int wstatus;
	struct rusage ru;
	while (wait4(pid, &wstatus, 0, &ru) < 0)
		if (errno != EINTR) {
			fprintf(stderr, "bench-run: wait4: %s\n", strerror(errno));
			return 1;
		}
	double wall = now_seconds() - t0;
	int status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);

	double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
		     (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
	fprintf(out, "%.6f %ld %d %.6f\n", wall, ru.ru_maxrss, status, cpu);
	if (fclose(out) != 0) {
		fprintf(stderr, "bench-run: %s: cannot write\n", argv[1]);
		return 1;
	}
	return status;
}
