/* Room for reading debug information, see deep_stack.h. */
#include "deep_stack.h"

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>

struct deep_call {
	int (*fn)(void *arg);
	void *arg;
	int result;
};

static void *run(void *p)
{
	struct deep_call *c = p;

	c->result = c->fn(c->arg);
	return NULL;
}

int deep_stack_run(int (*fn)(void *arg), void *arg)
{
	struct deep_call c = {fn, arg, 0};
	sigset_t all, before;
	pthread_attr_t attr;
	pthread_t t;

	if (pthread_attr_init(&attr) != 0)
		return fn(arg);
	/* Signals stay with the calling thread, which passes them on to a
	 * command memplan runs. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &before);
	const bool started = pthread_attr_setstacksize(&attr, DEEP_STACK_BYTES) == 0 &&
			     pthread_create(&t, &attr, run, &c) == 0;
	pthread_sigmask(SIG_SETMASK, &before, NULL);
	pthread_attr_destroy(&attr);
	if (!started)
		return fn(arg);
	pthread_join(t, NULL);
	return c.result;
}

struct deep_main {
	int (*main)(int argc, char **argv);
	int argc;
	char **argv;
};

static int run_main(void *p)
{
	const struct deep_main *m = p;

	return m->main(m->argc, m->argv);
}

int deep_stack_main(int (*main)(int argc, char **argv), int argc, char **argv)
{
	struct deep_main m = {main, argc, argv};

	return deep_stack_run(run_main, &m);
}
