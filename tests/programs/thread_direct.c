/* Threads whose start function allocates itself: no frame pointer, a frame of
 * a word or two, the shape gcc gives a short thread function at -O2. Replay
 * walks such a stack from the allocation up through memplan's frame that
 * starts each thread, into glibc's start_thread and clone3.
 * argv[1]: how many threads, started one after another. Prints a checksum.
 * (One callee-saved register only, so that the frame pointer stays the one
 * memplan's frame set, as in the program this was found with.) */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *volatile sink;

__attribute__((noinline, optimize("omit-frame-pointer"))) static void *direct(void *arg)
{
	char *kept = malloc(100);
	(void)arg;
	memset(kept, 1, 100);
	sink = kept;
	char *dropped = malloc(200);
	sink = dropped;
	free(dropped);
	return kept;
}

int main(int argc, char **argv)
{
	long threads = argc > 1 ? atol(argv[1]) : 50, sum = 0;

	for (long i = 0; i < threads; i++) {
		pthread_t t;
		void *kept;
		if (pthread_create(&t, NULL, direct, NULL) || pthread_join(t, &kept))
			return 1;
		sum += ((unsigned char *)kept)[99];
		free(kept);
	}
	printf("%ld\n", sum);
	return 0;
}
