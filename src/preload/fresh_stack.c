/* A stack for a fatal signal's handler, see fresh_stack.h. */
#include "fresh_stack.h"

#include <stddef.h>
#include <sys/mman.h>

/* Far more than writing a plan takes (under 12 KiB measured), for what the
 * planner and libc may ask in a process with many call sites; only the pages
 * used are ever touched. */
#define FRESH_STACK_BYTES (1024u * 1024u)
#define GUARD_BYTES	  4096u

#if defined(__x86_64__)
void fresh_stack_call(void *top, void (*fn)(void *), void *arg);

void fresh_stack_run(void (*fn)(void *), void *arg)
{
	char *base = mmap(NULL, GUARD_BYTES + FRESH_STACK_BYTES, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);

	if (base == MAP_FAILED) {
		fn(arg);
		return;
	}
	/* An overflow faults instead of writing into what lies below. */
	mprotect(base, GUARD_BYTES, PROT_NONE);
	fresh_stack_call(base + GUARD_BYTES + FRESH_STACK_BYTES, fn, arg);
}
#else
void fresh_stack_run(void (*fn)(void *), void *arg)
{
	fn(arg);
}
#endif
