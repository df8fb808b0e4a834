/* The main thread's stack bounds, see main_stack.h. */
#define _GNU_SOURCE
#include "main_stack.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/resource.h>
#include <unistd.h>

/* /proc/self/maps, a buffer at a time. */
struct maps_reader {
	int fd;
	ssize_t len, at;
	char buf[1024];
};

/* The next byte, or -1 at the end or on an error. */
static int next_byte(struct maps_reader *m)
{
	if (m->at == m->len) {
		do
			m->len = read(m->fd, m->buf, sizeof(m->buf));
		while (m->len < 0 && errno == EINTR);
		m->at = 0;
		if (m->len <= 0)
			return -1;
	}
	return (unsigned char)m->buf[m->at++];
}

static int hex_digit(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* A hexadecimal number and the byte after it, into *after. False if the line
 * does not start with one. */
static bool read_hex(struct maps_reader *m, uintptr_t *value, int *after)
{
	int c = next_byte(m), d, digits = 0;
	uintptr_t v = 0;

	for (; (d = hex_digit(c)) >= 0; c = next_byte(m), digits++)
		v = v << 4 | (uintptr_t)d;
	*value = v;
	*after = c;
	return digits > 0 && digits <= (int)(2 * sizeof(uintptr_t));
}

/* The range [*from, *to) of the next line; false at the end of the file or at
 * a line that does not start with one. */
static bool next_range(struct maps_reader *m, uintptr_t *from, uintptr_t *to)
{
	int c;

	if (!read_hex(m, from, &c) || c != '-' || !read_hex(m, to, &c))
		return false;
	while (c != '\n' && c >= 0)
		c = next_byte(m);
	return true;
}

/* As glibc: the stack's top is the page after stack_end (above it lie the
 * arguments and environment), and it may grow down to the size limit, less
 * what the mapping, which ends at to, holds above the top, but not into the
 * mapping below, which ends at last_to. */
static void bounds_of(uintptr_t stack_end, uintptr_t to, uintptr_t last_to, rlim_t limit,
		      uintptr_t page, uintptr_t *low, uintptr_t *top)
{
	uintptr_t stack_top = (stack_end & -page) + page;
	uintptr_t bytes = (uintptr_t)limit - (to - stack_top);

	if (limit < to - stack_top)
		bytes = 0;
	bytes &= -page;
	if (bytes > stack_top - last_to)
		bytes = stack_top - last_to;
	*low = stack_top - bytes;
	*top = stack_top;
}

bool main_stack_bounds_from_maps(uintptr_t stack_end, uintptr_t *low, uintptr_t *top)
{
	struct maps_reader m = {.fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC)};
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), from, to, last_to = 0;
	struct rlimit limit;
	bool found = false;

	if (m.fd < 0)
		return false;
	while (!found && next_range(&m, &from, &to)) {
		if (from <= stack_end && stack_end < to)
			found = true;
		else
			last_to = to;
	}
	close(m.fd);
	if (!found || getrlimit(RLIMIT_STACK, &limit) != 0)
		return false;
	bounds_of(stack_end, to, last_to, limit.rlim_cur, page, low, top);
	return true;
}

/* The stack limits the address of the executable's name is trusted under:
 * the usual ones (8 MiB by default). */
#define NAME_LIMIT_MAX (UINT64_C(128) << 20)

bool main_stack_bounds(uintptr_t stack_end, uintptr_t *low, uintptr_t *top)
{
	const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	const char *execfn = (const char *)getauxval(AT_EXECFN);
	struct rlimit limit;

	/* The kernel puts the name of the executable at the top of the stack, a
	 * word below the end of its mapping (fs/exec.c), and maps nothing else
	 * within the stack's limit below it (mmap_base leaves the limit, the
	 * guard gap and the stack's random offset free): what glibc reads from
	 * /proc/self/maps follows, without the read (35 us of each process's
	 * start, most of it the kernel's writing of the file). With no limit
	 * (the legacy layout) or an unusual one, or if the name is not where it
	 * should be, the file is read. */
	if (execfn && (uintptr_t)execfn > stack_end && getrlimit(RLIMIT_STACK, &limit) == 0 &&
	    limit.rlim_cur <= NAME_LIMIT_MAX) {
		uintptr_t to = ((uintptr_t)execfn + strlen(execfn) + 1 + page - 1) & -page;
		if (to - stack_end <= limit.rlim_cur) {
			bounds_of(stack_end, to, to - limit.rlim_cur, limit.rlim_cur, page, low,
				  top);
			return true;
		}
	}
	return main_stack_bounds_from_maps(stack_end, low, top);
}
