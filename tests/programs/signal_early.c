/* A library whose initialiser sets a SIGALRM handler that ends the process
 * with exit(3). The loader initialises it before libmemplan.so, so the
 * handler is in place before memplan starts. */
#include <signal.h>
#include <stdlib.h>

static void on_alarm(int sig)
{
	(void)sig;
	exit(3);
}

__attribute__((constructor)) static void set_early(void)
{
	signal(SIGALRM, on_alarm);
}

/* Whether sigaction reports the handler this library set. */
__attribute__((visibility("default"))) int signal_early_reported(void)
{
	struct sigaction now;

	return sigaction(SIGALRM, NULL, &now) == 0 && now.sa_handler == on_alarm;
}
