/* What deepbind_lib.so hands deepbind_host: its own allocation calls, each
 * bound as a library opened with RTLD_DEEPBIND binds them. */
#pragma once

#include <stddef.h>

struct deepbind_api {
	void (*free)(void *p);
	void *(*malloc)(size_t n);
	void *(*calloc)(size_t n, size_t size);
	void *(*realloc)(void *p, size_t n);
	void *(*aligned_alloc)(size_t align, size_t n);
	size_t (*usable)(void *p);
	void (*free_by_pointer)(void *p); /* free itself, a pointer in the library's data */
};
