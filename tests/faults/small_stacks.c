/* Threads on the smallest stacks a program may ask for, which allocate.
 *
 * glibc carves every thread's static TLS out of its stack, and pthread_create
 * fails with EINVAL when the stack asked for cannot hold it: memplan's
 * thread-local state counts against each one. node's threads of 64 KiB failed
 * so under memplan ("pthread_create: Invalid argument"), when its call-site
 * caches were 52 KiB of TLS. Each thread also allocates in a destructor of a
 * key of its own, after memplan gave its caches back (its key is older). Prints
 * what each thread computed; exits 1 if a thread could not be made. */
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROUNDS 2000

static pthread_key_t late_key;
static uintptr_t late_sum; /* what the last thread's destructor computed */

static void allocate_late(void *value)
{
	uintptr_t sum = 0;

	for (uintptr_t i = 1; i <= 64; i++) {
		char *p = malloc(i * 8);
		if (!p)
			return;
		memset(p, (int)i, i * 8);
		sum += (uintptr_t)p[i * 8 - 1] + (uintptr_t)value;
		free(p);
	}
	late_sum = sum;
}

static void *work(void *arg)
{
	uintptr_t seed = (uintptr_t)arg, sum = 0;
	void *held[8] = {0};

	for (int i = 0; i < ROUNDS; i++) {
		size_t n = 16 + (seed * 2654435761u + (uintptr_t)i * 40503u) % 500;
		int slot = i % 8;
		free(held[slot]);
		held[slot] = malloc(n);
		if (!held[slot])
			return NULL;
		memset(held[slot], (int)(i & 0xff), n);
		sum += ((unsigned char *)held[slot])[n - 1] + n;
	}
	for (int slot = 0; slot < 8; slot++)
		free(held[slot]);
	pthread_setspecific(late_key, (void *)seed);
	return (void *)sum;
}

int main(void)
{
	const size_t sizes[] = {PTHREAD_STACK_MIN, 32 * 1024, 64 * 1024};
	int status = 0;

	if (pthread_key_create(&late_key, allocate_late) != 0)
		return 1;
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		pthread_attr_t attr;
		pthread_t thread;
		void *result;

		pthread_attr_init(&attr);
		pthread_attr_setstacksize(&attr, sizes[s]);
		int r = pthread_create(&thread, &attr, work, (void *)(uintptr_t)(s + 1));
		pthread_attr_destroy(&attr);
		if (r) {
			printf("stack of %zu KiB: pthread_create: %s\n", sizes[s] / 1024,
			       strerror(r));
			status = 1;
			continue;
		}
		pthread_join(thread, &result);
		printf("stack of %zu KiB: %lu, at its end %lu\n", sizes[s] / 1024,
		       (unsigned long)(uintptr_t)result, (unsigned long)late_sum);
	}
	return status;
}
