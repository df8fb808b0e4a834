/* Four threads allocate and free without pause; main returns while they are
 * at it, so the process ends in the middle of their allocations (the
 * statistics are written then). usage: exit_threads [MILLISECONDS before main
 * returns, default 100] */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void *churn(void *arg)
{
	unsigned long r = (unsigned long)(size_t)arg * 7919;

	for (;;) {
		void *keep[4];
		for (int i = 0; i < 4; i++) {
			keep[i] = malloc(16 + (r++ * 31) % 1500);
			if (!keep[i])
				abort();
		}
		for (int i = 0; i < 4; i++)
			free(keep[i]);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long ms = argc > 1 ? atol(argv[1]) : 100;
	pthread_t t[4];

	for (int i = 0; i < 4; i++)
		if (pthread_create(&t[i], NULL, churn, (void *)(size_t)i))
			return 2;
	struct timespec d = {ms / 1000, (ms % 1000) * 1000000};
	nanosleep(&d, NULL);
	printf("returning\n");
	return 0;
}
