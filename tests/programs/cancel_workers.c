/* Workers that allocate and free with deferred cancellation, each cancelled at
 * a moment of the scheduler's choosing; glibc's malloc is no cancellation
 * point, so a worker ends only at its own (pthread_testcancel). Then the
 * process allocates on its own: a lock that a cancelled worker took with it
 * would hang it there. argv[1]: rounds of two workers. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void *work(void *arg)
{
	unsigned seed = (unsigned)(long)arg;
	void *keep[32] = {0};

	for (long i = 0;; i++) {
		int k = rand_r(&seed) % 32;
		free(keep[k]);
		keep[k] = malloc(16 + (size_t)(rand_r(&seed) % 600));
		if (i % 4096 == 0)
			pthread_testcancel();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 100;
	unsigned seed = 1;

	for (int r = 0; r < rounds; r++) {
		pthread_t t[2];
		for (long i = 0; i < 2; i++)
			if (pthread_create(&t[i], NULL, work, (void *)(long)(r * 2 + i)))
				return 1;
		struct timespec pause = {0, 200000 + rand_r(&seed) % 800000};
		nanosleep(&pause, NULL);
		for (int i = 0; i < 2; i++)
			pthread_cancel(t[i]);
		for (int i = 0; i < 2; i++)
			pthread_join(t[i], NULL);
	}
	unsigned long sum = 0;
	for (int i = 0; i < 100000; i++) {
		char *p = malloc(32 + (size_t)(i % 100));
		p[0] = 1;
		sum += (unsigned long)p[0];
		free(p);
	}
	printf("%d rounds of cancelled workers, then %lu allocations\n", rounds, sum);
	return 0;
}
