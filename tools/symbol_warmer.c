/* Warming the symbolizer for libc, see symbol_warmer.h. */
#define _GNU_SOURCE
#include "symbol_warmer.h"

#include <link.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "deep_stack.h"
#include "symbolize.h"

/* dl_iterate_phdr's callback: copies the name of the module that is libc. */
static int find_libc(struct dl_phdr_info *info, size_t size, void *ctx)
{
	char **path = ctx;
	const char *slash = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;

	(void)size;
	if (!slash || strcmp(slash + 1, "libc.so.6") != 0)
		return 0;
	*path = strdup(info->dlpi_name);
	return 1;
}

static void *warm(void *arg)
{
	struct symbolizer *sym = arg;
	char *libc = NULL;

	dl_iterate_phdr(find_libc, &libc);
	if (libc)
		symbolizer_warm(sym, libc);
	free(libc);
	return NULL;
}

void symbol_warmer_start(struct symbol_warmer *w)
{
	sigset_t all, before;

	w->running = false;
	w->sym = symbolizer_new();
	if (!w->sym)
		return;
	/* Signals sent to memplan stay with the thread that passes them on. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &before);
	/* Its stack of a set size: a thread's default is the stack limit, which
	 * may be small (deep_stack.h). */
	pthread_attr_t attr;
	const bool sized = pthread_attr_init(&attr) == 0 &&
			   pthread_attr_setstacksize(&attr, DEEP_STACK_BYTES) == 0;
	w->running = pthread_create(&w->thread, sized ? &attr : NULL, warm, w->sym) == 0;
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &before, NULL);
}

struct symbolizer *symbol_warmer_take(struct symbol_warmer *w)
{
	if (w->running)
		pthread_join(w->thread, NULL);
	w->running = false;
	return w->sym;
}
