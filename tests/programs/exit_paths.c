/* Allocates from a few call sites, then leaves the process in the way named by
 * argv[1]: return, exit, _exit, _Exit, abort, segv, term (SIGTERM to itself), int
 * (SIGINT, as ^C sends it), sysv_signal, bsd_signal or sigset (a SIGTERM handler
 * set and reset to the default with that function, then SIGTERM to itself), exec
 * (execv /bin/true), or execlp (execlp true). Every
 * way must leave a complete plan behind when recorded. Keeps ALLOCS blocks live at
 * the end (never freed). With "dispositions" it prints what sigaction and signal
 * report for the signals that end a process, which must read the same with memplan
 * as without, and returns. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* glibc declares it only for older X/Open levels than _GNU_SOURCE asks for. */
sighandler_t bsd_signal(int sig, sighandler_t handler);
/* sigset is deprecated, and what this program checks memplan keeps working. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#define ALLOCS 100

static __attribute__((noinline)) void *keep(size_t n)
{
	return malloc(n);
}

static void print_dispositions(void)
{
	static const int sigs[] = {SIGINT, SIGQUIT, SIGTERM, SIGSEGV, SIGPIPE};

	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		struct sigaction old;
		sigaction(sigs[i], NULL, &old);
		printf("%d sigaction %s\n", sigs[i], old.sa_handler == SIG_DFL ? "default" : "set");
	}
	/* signal() replaces the disposition and says what it was; so do the others. */
	printf("signal %s\n", signal(SIGINT, SIG_IGN) == SIG_DFL ? "default" : "set");
	printf("then %s\n", signal(SIGINT, SIG_DFL) == SIG_IGN ? "ignored" : "other");
	printf("sysv_signal %s\n", sysv_signal(SIGTERM, SIG_IGN) == SIG_DFL ? "default" : "set");
	printf("sigset %s\n", sigset(SIGQUIT, SIG_IGN) == SIG_DFL ? "default" : "set");
	printf("sigset hold %s\n", sigset(SIGQUIT, SIG_HOLD) == SIG_IGN ? "ignored" : "other");
	printf("sigset again %s\n", sigset(SIGQUIT, SIG_DFL) == SIG_HOLD ? "held" : "other");
}

static void ignore(int sig)
{
	(void)sig;
}

/* Sets a handler for SIGTERM through set_disposition, then the default again, and
 * dies by SIGTERM: memplan's hook must be back in place to write the plan. */
static void term_after(sighandler_t (*set_disposition)(int, sighandler_t))
{
	set_disposition(SIGTERM, ignore);
	set_disposition(SIGTERM, SIG_DFL);
	raise(SIGTERM);
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
	if (!strcmp(how, "dispositions"))
		print_dispositions();
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
	if (!strcmp(how, "int"))
		raise(SIGINT);
	if (!strcmp(how, "sysv_signal"))
		term_after(sysv_signal);
	if (!strcmp(how, "bsd_signal"))
		term_after(bsd_signal);
	if (!strcmp(how, "sigset"))
		term_after(sigset);
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
