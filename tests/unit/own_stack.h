/* The calling thread's stack, as glibc's pthread_getattr_np gives it, for the
 * tests that check stack bounds against glibc's. Needs _GNU_SOURCE. */
#pragma once

#include <pthread.h>
#include <stdint.h>

#include "check.h"

static inline void own_stack(uintptr_t *low, uintptr_t *top)
{
	pthread_attr_t attr;
	void *start;
	size_t bytes;

	CHECK(pthread_getattr_np(pthread_self(), &attr) == 0);
	CHECK(pthread_attr_getstack(&attr, &start, &bytes) == 0);
	pthread_attr_destroy(&attr);
	*low = (uintptr_t)start;
	*top = (uintptr_t)start + bytes;
}
