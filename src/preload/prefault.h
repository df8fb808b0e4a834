/* Fresh anonymous memory that a table is about to fill, mapped for writing in
 * one system call.
 *
 * A hash table's first use of a page reads it (a lookup before the insert),
 * which maps the shared zero page, and then writes it, which faults again to
 * give the page its own copy: two faults of about 1 us each (here, in a
 * virtual machine) where one would do. A replayed `head` took six such pairs
 * at start-up in its frame-size table and call-site caches. */
#pragma once

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22 /* Linux 5.14 */
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

/* Maps the whole pages of [p, p + bytes) now, as advice says. Only a hint: on
 * a kernel without it (EINVAL), or short of memory, the pages come at first
 * touch, as before. Leaves errno as it was: it runs within the program's
 * allocation calls, which succeed all the same. */
static inline void prefault_pages(const void *p, size_t bytes, int advice)
{
	const uintptr_t page = 4096;
	uintptr_t from = ((uintptr_t)p + page - 1) & ~(page - 1);
	uintptr_t to = ((uintptr_t)p + bytes) & ~(page - 1);

	if (from < to) {
		const int saved_errno = errno;
		(void)madvise((void *)from, to - from, advice);
		errno = saved_errno;
	}
}

/* For writing. Only for memory the caller is about to write most pages of,
 * and that no other process shares (a forked child's copy of its parent's
 * pages would be copied, used or not). */
static inline void prefault_write(void *p, size_t bytes)
{
	prefault_pages(p, bytes, MADV_POPULATE_WRITE);
}

/* For reading, memory about to be read but not written: each untouched page
 * maps the zero page, which costs no memory, but a fault each (10 us here, in
 * a virtual machine) when read one by one. */
static inline void prefault_read(const void *p, size_t bytes)
{
	prefault_pages(p, bytes, MADV_POPULATE_READ);
}
