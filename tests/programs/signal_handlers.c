/* A program whose signal handlers land while it allocates, which is where
 * they land under record: memplan's code is most of an allocating thread's
 * time.
 *
 *   signal_handlers exit US   two threads allocate; after US microseconds a
 *                             SIGALRM handler ends the process with exit(3),
 *                             as many programs' SIGINT and SIGTERM handlers do.
 *   signal_handlers exit-raw US   the same with the handler set by the system
 *                             call itself, as the Go runtime sets its own:
 *                             out of memplan's sight, it may run inside
 *                             memplan's code.
 *   signal_handlers exit-early US   the same with the handler set by the
 *                             initialiser of a library (signal_early.c),
 *                             before memplan starts.
 *   signal_handlers fork N    forks N children one after another under a
 *                             20 us interval timer (SIGALRM); no child may
 *                             run the handler for a signal sent to its
 *                             parent.
 *   signal_handlers threads N creates N threads one after another under a
 *                             20 us interval timer (SIGALRM); none may
 *                             start with SIGALRM blocked.
 *   signal_handlers info N    a child sends N queued real-time signals, each
 *                             with its number, which a SA_SIGINFO handler
 *                             checks (sender, code, value, order) while the
 *                             process allocates; then one SIGUSR1 to a
 *                             handler set with SA_RESETHAND. Prints what
 *                             arrived and what sigaction reports.
 *   signal_handlers dispositions   prints what sigaction reports for the
 *                             fatal signals a parent may leave ignored
 *                             across exec, then raises each one ignored and
 *                             says it is still there (memplan hooks only
 *                             those left at their default). */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

static void churn(unsigned seed, volatile sig_atomic_t *until)
{
	void *keep[64] = {0};

	while (!until || !*until) {
		int k = rand_r(&seed) % 64;
		free(keep[k]);
		keep[k] = malloc(16 + rand_r(&seed) % 1000);
	}
	for (int k = 0; k < 64; k++)
		free(keep[k]);
}

static void on_alarm(int sig)
{
	(void)sig;
	exit(3);
}

static void *churn_forever(void *arg)
{
	churn((unsigned)(long)arg, NULL);
	return NULL;
}

/* The kernel's struct sigaction on x86-64, and the return path its handlers
 * need (SA_RESTORER), as a runtime that bypasses libc brings its own. */
struct kernel_sigaction {
	void (*handler)(int);
	unsigned long flags;
	void (*restorer)(void);
	unsigned long mask;
};
#define KERNEL_SA_RESTORER 0x04000000ul
void return_from_handler(void);
__asm__(".text\n"
	"return_from_handler:\n"
	"	mov $15, %eax\n" /* rt_sigreturn */
	"	syscall\n");

static int set_handler_raw(int sig, void (*handler)(int))
{
	struct kernel_sigaction act = {handler, SA_RESTART | KERNEL_SA_RESTORER, return_from_handler,
				       0};

	return (int)syscall(SYS_rt_sigaction, sig, &act, NULL, sizeof(act.mask));
}

int signal_early_reported(void);

enum handler_setter { BY_SIGNAL, BY_SYSCALL, BY_LIBRARY };

static int run_exit(long us, enum handler_setter setter)
{
	pthread_t t;
	struct itimerval it = {{0, 0}, {us / 1000000, us % 1000000}};

	if (setter == BY_LIBRARY && !signal_early_reported()) {
		fprintf(stderr, "signal_handlers: the library's handler is not reported\n");
		return 1;
	}
	pthread_create(&t, NULL, churn_forever, (void *)1L);
	if (setter == BY_SIGNAL && signal(SIGALRM, on_alarm) == SIG_ERR)
		return 1;
	if (setter == BY_SYSCALL && set_handler_raw(SIGALRM, on_alarm) < 0)
		return 1;
	setitimer(ITIMER_REAL, &it, NULL);
	churn(2, NULL);
	return 0;
}

static pid_t parent;
static volatile sig_atomic_t ran_in_child;

static void on_alarm_parent_only(int sig)
{
	(void)sig;
	if (getpid() != parent)
		ran_in_child++;
}

static int run_fork(int forks)
{
	struct itimerval every = {{0, 20}, {0, 20}}, off = {{0, 0}, {0, 0}};
	int wrong = 0;

	parent = getpid();
	signal(SIGALRM, on_alarm_parent_only);
	setitimer(ITIMER_REAL, &every, NULL); /* a child inherits no timer */
	for (int f = 0; f < forks; f++) {
		free(malloc(100));
		pid_t child = fork();
		if (child == 0)
			_exit(ran_in_child ? 1 : 0);
		int status;
		while (waitpid(child, &status, 0) < 0)
			;
		wrong += !WIFEXITED(status) || WEXITSTATUS(status);
	}
	setitimer(ITIMER_REAL, &off, NULL);
	printf("%d forks, %d children ran the parent's handler\n", forks, wrong);
	return 0;
}

static void on_tick(int sig)
{
	(void)sig;
}

static void *alarm_blocked(void *unused)
{
	sigset_t now;

	(void)unused;
	pthread_sigmask(SIG_BLOCK, NULL, &now);
	return (void *)(long)sigismember(&now, SIGALRM);
}

static int run_threads(int n)
{
	struct sigaction tick = {.sa_handler = on_tick, .sa_flags = SA_RESTART};
	struct itimerval every = {{0, 20}, {0, 20}}, off = {{0, 0}, {0, 0}};
	int blocked = 0;

	sigemptyset(&tick.sa_mask);
	sigaction(SIGALRM, &tick, NULL);
	setitimer(ITIMER_REAL, &every, NULL);
	for (int i = 0; i < n; i++) {
		pthread_t t;
		void *result;

		free(malloc(64));
		if (pthread_create(&t, NULL, alarm_blocked, NULL) || pthread_join(t, &result))
			return 1;
		blocked += result != NULL;
	}
	setitimer(ITIMER_REAL, &off, NULL);
	printf("%d threads, %d started with SIGALRM blocked\n", n, blocked);
	return 0;
}

static pid_t sender;
static int ack_fd;
static volatile sig_atomic_t arrived, wrong, usr1_seen, done;

static void on_queued(int sig, siginfo_t *info, void *context)
{
	(void)context;
	if (sig != SIGRTMIN || info->si_signo != sig || info->si_code != SI_QUEUE ||
	    info->si_pid != sender || info->si_value.sival_int != arrived) {
		wrong++;
	}
	arrived++;
	if (write(ack_fd, "", 1) != 1)
		wrong++;
}

static void on_usr1(int sig)
{
	(void)sig;
	usr1_seen++;
	done = 1;
}

static void send_all(pid_t to, int n, int ack)
{
	char byte;

	for (int i = 0; i < n; i++) {
		union sigval v = {.sival_int = i};
		if (sigqueue(to, SIGRTMIN, v) < 0 || read(ack, &byte, 1) != 1)
			_exit(1);
	}
	usleep(2000);
	kill(to, SIGUSR1);
	_exit(0);
}

static int run_info(int n)
{
	struct sigaction queued = {.sa_sigaction = on_queued, .sa_flags = SA_SIGINFO | SA_RESTART};
	struct sigaction once = {.sa_handler = on_usr1, .sa_flags = SA_RESETHAND};
	struct sigaction now;
	int acks[2];
	int status;

	sigemptyset(&queued.sa_mask);
	sigaddset(&queued.sa_mask, SIGUSR2);
	sigemptyset(&once.sa_mask);
	if (pipe(acks) < 0 || sigaction(SIGRTMIN, &queued, NULL) < 0 ||
	    sigaction(SIGUSR1, &once, NULL) < 0)
		return 1;
	sigaction(SIGRTMIN, NULL, &now);
	printf("SIGRTMIN reported as set: %s\n",
	       now.sa_sigaction == on_queued &&
			       (now.sa_flags & (SA_SIGINFO | SA_RESTART | SA_RESETHAND)) ==
				   (SA_SIGINFO | SA_RESTART) &&
		       sigismember(&now.sa_mask, SIGUSR2) && !sigismember(&now.sa_mask, SIGINT)
		   ? "yes"
		   : "no");
	ack_fd = acks[1];
	/* Held until the parent knows the sender's pid. */
	sigset_t rt, before;
	sigemptyset(&rt);
	sigaddset(&rt, SIGRTMIN);
	sigprocmask(SIG_BLOCK, &rt, &before);
	sender = fork();
	if (sender == 0)
		send_all(getppid(), n, acks[0]);
	sigprocmask(SIG_SETMASK, &before, NULL);
	churn(3, &done);
	waitpid(sender, &status, 0);
	sigaction(SIGUSR1, NULL, &now);
	printf("%d queued signals arrived, %d with a wrong siginfo or out of order\n", (int)arrived,
	       (int)wrong);
	printf("SIGUSR1 handled %d time(s), then reported as %s\n", (int)usr1_seen,
	       now.sa_handler == SIG_DFL ? "the default" : "something else");
	printf("sender exited %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return 0;
}

static int run_dispositions(void)
{
	static const int sigs[] = {SIGHUP, SIGINT, SIGQUIT, SIGPIPE, SIGTERM, SIGUSR1};

	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		struct sigaction now;
		if (sigaction(sigs[i], NULL, &now) < 0)
			return 1;
		free(malloc(100 + i)); /* under replay, an allocation between */
		const bool ignored = now.sa_handler == SIG_IGN;
		printf("%s %s", strsignal(sigs[i]),
		       ignored			   ? "ignored"
		       : now.sa_handler == SIG_DFL ? "default"
						   : "handled");
		if (ignored) {
			raise(sigs[i]);
			printf(", raised and still here");
		}
		printf("\n");
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "exit"))
		return run_exit(atol(argv[2]), BY_SIGNAL);
	if (argc == 3 && !strcmp(argv[1], "exit-raw"))
		return run_exit(atol(argv[2]), BY_SYSCALL);
	if (argc == 3 && !strcmp(argv[1], "exit-early"))
		return run_exit(atol(argv[2]), BY_LIBRARY);
	if (argc == 3 && !strcmp(argv[1], "fork"))
		return run_fork(atoi(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "threads"))
		return run_threads(atoi(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "info"))
		return run_info(atoi(argv[2]));
	if (argc == 2 && !strcmp(argv[1], "dispositions"))
		return run_dispositions();
	fprintf(stderr, "usage: signal_handlers exit|exit-raw|exit-early US | fork N | threads N | "
			"info N | dispositions\n");
	return 2;
}
