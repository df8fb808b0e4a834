/* Running the command, see launch.h. */
#define _GNU_SOURCE
#include "launch.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "preload_path.h"

int launch_add_preload(void)
{
	char lib[PATH_MAX], *value;
	const char *old = getenv("LD_PRELOAD");

	if (preload_path_find(lib, sizeof(lib)) < 0) {
		fprintf(stderr, "memplan: %s: preload library not found (%s)\n", lib,
			getenv("MEMPLAN_PRELOAD") ? "as MEMPLAN_PRELOAD names it"
						  : "MEMPLAN_PRELOAD may name another, as for an "
						    "install staged with DESTDIR");
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

int launch_check_record_module(void)
{
	char lib[PATH_MAX];

	if (preload_path_find(lib, sizeof(lib)) < 0)
		return 0; /* launch_add_preload says so */
	char *slash = strrchr(lib, '/');
	size_t dir = slash ? (size_t)(slash + 1 - lib) : 0;
	if (dir + sizeof(MEMPLAN_RECORD_MODULE_NAME) > sizeof(lib))
		return 0;
	memcpy(lib + dir, MEMPLAN_RECORD_MODULE_NAME, sizeof(MEMPLAN_RECORD_MODULE_NAME));
	if (access(lib, R_OK) == 0)
		return 0;
	fprintf(stderr,
		"memplan: %s: %s (it holds the recording, and goes beside " MEMPLAN_PRELOAD_NAME
		")\n",
		lib, strerror(errno));
	return -1;
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
/* How the last command went: started, and the signal that ended it. */
static bool last_started;
static int last_signal;

bool launch_started(void)
{
	return last_started;
}

int launch_signal(void)
{
	return last_signal;
}

int launch_end_as_command(int status)
{
	const int sig = last_signal;
	struct rlimit core;
	sigset_t one;

	if (!sig || status != 128 + sig)
		return status;
	fflush(stdout);
	fflush(stderr);
	if (getrlimit(RLIMIT_CORE, &core) == 0) {
		core.rlim_cur = 0;
		setrlimit(RLIMIT_CORE, &core);
	}
	signal(sig, SIG_DFL);
	sigemptyset(&one);
	sigaddset(&one, sig);
	sigprocmask(SIG_UNBLOCK, &one, NULL);
	raise(sig);
	return status;
}

/* In the parent, once the child has forked: whether it ran its program. The
 * child writes its exec's errno to report, which closes on a successful exec. */
static bool child_ran(int report[2])
{
	int err;
	ssize_t n;

	if (report[0] < 0)
		return true; /* no pipe to tell: its status will */
	close(report[1]);
	do
		n = read(report[0], &err, sizeof(err));
	while (n < 0 && errno == EINTR);
	close(report[0]);
	return n != (ssize_t)sizeof(err);
}

static const int passed_on[] = {SIGTERM, SIGHUP, SIGINT, SIGQUIT};
#define PASSED_ON_COUNT (sizeof(passed_on) / sizeof(passed_on[0]))

/* A signal passed on to the command: it may have come as the command ended,
 * too late for it to act on (launch_signal_passed). */
static volatile sig_atomic_t passed_signal;

static void pass_on(int sig, siginfo_t *info, void *context)
{
	int saved = errno;

	(void)context;
	passed_signal = sig;
	/* One from the terminal (^C, ^\, a hangup) the kernel sent to the whole
	 * foreground process group: to the command too, if it is still in
	 * memplan's. A second would cut its handler short (Python's
	 * KeyboardInterrupt, raised again in its clean-up). */
	if (child_pid > 0 &&
	    !(info && info->si_code == SI_KERNEL && getpgid(child_pid) == getpgrp()))
		kill(child_pid, sig);
	errno = saved;
}

bool launch_signal_passed(void)
{
	return passed_signal != 0;
}

static void on_write_signal(int sig)
{
	(void)sig;
}

/* memplan's own lines go to its stderr, which may be a pipe whose reader is
 * gone (`memplan replay ... 2>&1 | head -1`), and its plans to files that a
 * file-size limit may stop (`ulimit -f`): a write there must fail (EPIPE,
 * EFBIG), not end memplan before it passes the command's status on or
 * finishes the plan. A handler, not SIG_IGN: exec puts a handled signal back
 * to its default, so the command gets SIGPIPE and SIGXFSZ as it would alone,
 * and one that memplan's parent ignored stays ignored for both. */
static void survive_closed_stderr(void)
{
	struct sigaction old, sa = {.sa_handler = on_write_signal, .sa_flags = SA_RESTART};
	const int sigs[] = {SIGPIPE, SIGXFSZ};

	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL &&
		    !(old.sa_flags & SA_SIGINFO))
			sigaction(sigs[i], &sa, NULL);
}

/* The descriptor limit the user gave the command, and whether memplan runs
 * with more (launch_raise_descriptor_limit). */
static struct rlimit command_descriptors;
static bool descriptors_raised;

void launch_raise_descriptor_limit(void)
{
	/* The plan, its directory's lock, the statistics, the recording's claim,
	 * the symbols' ELF files: a few dozen at most. With 4, a recording
	 * wrote its plan but memplan could not read it back: no symbols, and
	 * "no process wrote a plan". */
	const rlim_t wanted = 256;
	struct rlimit mine;

	if (getrlimit(RLIMIT_NOFILE, &command_descriptors) < 0 ||
	    command_descriptors.rlim_cur >= wanted)
		return;
	mine = command_descriptors;
	mine.rlim_cur = mine.rlim_max < wanted ? mine.rlim_max : wanted;
	descriptors_raised = setrlimit(RLIMIT_NOFILE, &mine) == 0;
}

int launch_run(char **argv)
{
	return launch_run_then(argv, NULL, NULL);
}

int launch_run_then(char **argv, void (*started)(void *ctx), void *ctx)
{
	struct sigaction forward = {.sa_sigaction = pass_on, .sa_flags = SA_RESTART | SA_SIGINFO};
	struct sigaction old[PASSED_ON_COUNT];
	sigset_t block, before;
	int status, report[2];
	pid_t pid;

	survive_closed_stderr();
	/* Blocked across fork: a signal before the handler knows the child waits. */
	sigemptyset(&block);
	for (size_t i = 0; i < PASSED_ON_COUNT; i++)
		sigaddset(&block, passed_on[i]);
	sigprocmask(SIG_BLOCK, &block, &before);
	sigemptyset(&forward.sa_mask);
	for (size_t i = 0; i < PASSED_ON_COUNT; i++)
		sigaction(passed_on[i], NULL, &old[i]);
	last_started = false;
	last_signal = 0;
	passed_signal = 0;
	/* The pipe only tells a failed exec from a command that ran: with too
	 * few descriptors left for it (ulimit -n 4), the command runs without. */
	if (pipe2(report, O_CLOEXEC) < 0)
		report[0] = report[1] = -1;
	const pid_t parent = getpid();
	pid = fork();
	if (pid < 0) {
		sigprocmask(SIG_SETMASK, &before, NULL);
		fprintf(stderr, "memplan: cannot fork: %s\n", strerror(errno));
		if (report[0] >= 0) {
			close(report[0]);
			close(report[1]);
		}
		return 127;
	}
	if (pid == 0) {
		/* memplan killed outright (SIGKILL, `timeout -s KILL`) takes the
		 * command with it, as if memplan were not there: a supervisor that
		 * kills what it started once left the command running alone. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(128 + SIGKILL); /* memplan died before that was set */
		sigprocmask(SIG_SETMASK, &before, NULL);
		if (report[0] >= 0)
			close(report[0]);
		/* Lowering a soft limit always succeeds; the pipe's descriptors
		 * above it close at exec. */
		if (descriptors_raised)
			setrlimit(RLIMIT_NOFILE, &command_descriptors);
		execvp(argv[0], argv);
		int err = errno;
		if (report[1] >= 0 && write(report[1], &err, sizeof(err)) < 0) {
			/* The parent takes the command as run; its status still says. */
		}
		fprintf(stderr, "memplan: %s: %s\n", argv[0], strerror(err));
		_exit(err == ENOENT || err == ENOTDIR ? 127 : 126);
	}
	last_started = child_ran(report);
	child_pid = pid;
	for (size_t i = 0; i < PASSED_ON_COUNT; i++)
		if (old[i].sa_handler != SIG_IGN) /* nohup and the like: stays ignored */
			sigaction(passed_on[i], &forward, NULL);
	sigprocmask(SIG_SETMASK, &before, NULL);
	if (started && last_started)
		started(ctx);
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
	if (WIFSIGNALED(status)) {
		last_signal = WTERMSIG(status);
		return 128 + WTERMSIG(status);
	}
	return 1;
}

int launch_adopt_left(void)
{
	return prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0 ? 0 : -errno;
}

/* Reaps the adopted processes that ended: whether any is still running. */
static bool reap_left(void)
{
	pid_t pid;

	while ((pid = waitpid(-1, NULL, WNOHANG)) > 0)
		;
	return pid == 0; /* -1 (ECHILD): no child left */
}

/* Appends "pid N name" to what (at its length *len), the name from
 * /proc/N/comm. */
static void describe(pid_t pid, char *what, size_t cap, size_t *len)
{
	char path[64], name[32] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	if ((f = fopen(path, "r"))) {
		if (fgets(name, sizeof(name), f))
			name[strcspn(name, "\n")] = 0;
		fclose(f);
	}
	int n = snprintf(what + *len, cap - *len, "%spid %d%s%s", *len ? ", " : "", (int)pid,
			 *name ? " " : "", name);
	if (n > 0 && (size_t)n < cap - *len)
		*len += (size_t)n;
}

/* How many of the first few left processes to name. */
#define LEFT_NAMED 3

unsigned launch_left(char *what, size_t cap)
{
	char path[64];
	unsigned count = 0;
	size_t len = 0;
	FILE *f;
	int pid;

	if (cap)
		what[0] = 0;
	if (!reap_left())
		return 0;
	/* The children of memplan's only thread; with no such file (a kernel
	 * without CONFIG_PROC_CHILDREN), there is at least one. */
	snprintf(path, sizeof(path), "/proc/self/task/%d/children", (int)getpid());
	if (!(f = fopen(path, "r")))
		return 1;
	while (fscanf(f, "%d", &pid) == 1)
		if (count++ < LEFT_NAMED && cap)
			describe(pid, what, cap, &len);
	fclose(f);
	if (count > LEFT_NAMED && cap)
		snprintf(what + len, cap - len, " and %u more", count - LEFT_NAMED);
	return count ? count : 1;
}

/* The system call itself: memplan runs under the LD_PRELOAD the user gives
 * the command, and one that fakes the time (libfaketime with a frozen clock)
 * would make the wait for what the command left running never end. */
static double now_s(void)
{
	struct timespec ts;

	syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

unsigned launch_wait_left(double seconds, bool *signalled)
{
	sigset_t wake, before;
	double deadline = now_s() + seconds;

	/* Blocked, these wait in sigtimedwait: SIGCHLD, even where its action is
	 * to ignore it, stays pending while blocked. */
	sigemptyset(&wake);
	sigaddset(&wake, SIGCHLD);
	for (size_t i = 0; i < PASSED_ON_COUNT; i++)
		sigaddset(&wake, passed_on[i]);
	sigprocmask(SIG_BLOCK, &wake, &before);
	if (*signalled && deadline > now_s() + 1)
		deadline = now_s() + 1;
	while (reap_left()) {
		double left_s = deadline - now_s();
		if (left_s <= 0)
			break;
		struct timespec ts = {.tv_sec = (time_t)left_s,
				      .tv_nsec = (long)((left_s - (double)(time_t)left_s) * 1e9)};
		int sig = sigtimedwait(&wake, NULL, &ts);
		if (sig > 0 && sig != SIGCHLD) {
			if (*signalled)
				break;
			*signalled = true;
			if (deadline > now_s() + 1)
				deadline = now_s() + 1;
		}
	}
	/* What came since would act on its own once unblocked (a SIGINT ends
	 * memplan before it writes anything): taken here instead. */
	const struct timespec now = {0};
	int sig;
	while ((sig = sigtimedwait(&wake, NULL, &now)) > 0)
		if (sig != SIGCHLD)
			*signalled = true;
	sigprocmask(SIG_SETMASK, &before, NULL);
	return launch_left(NULL, 0);
}

unsigned launch_wait_for_left(double seconds, const char *cmd, const char *why, char *what,
			      size_t cap)
{
	const double quiet =
	    seconds < LAUNCH_WAIT_QUIET_SECONDS ? seconds : LAUNCH_WAIT_QUIET_SECONDS;
	/* A ^C that reached memplan as the command ended asked to stop too. */
	bool signalled = launch_signal_passed();

	what[0] = '\0';
	if (seconds <= 0 || !launch_wait_left(quiet, &signalled))
		return 0; /* not waited for (0 s), or none left */
	if (seconds > quiet && !signalled) {
		launch_left(what, cap);
		fprintf(stderr,
			"memplan: waiting up to %g s for what %s left running (%s): %s "
			"(^C: one more second)\n",
			seconds, cmd, what, why);
		launch_wait_left(seconds - quiet, &signalled);
	}
	return launch_left(what, cap);
}
