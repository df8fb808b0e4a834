/* main_stack_bounds, and main_stack_bounds_from_maps, against glibc's
 * pthread_getattr_np, for the main thread, under several stack limits (the
 * first finds the bounds without the file under a limit of 128 MiB or less),
 * with /proc/self/maps long enough that its lines cross the reader's buffer. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "main_stack.h"
#include "own_stack.h"

extern void *__libc_stack_end;

static int child(void)
{
	/* Mappings of this very file, each a line of maps with its path. */
	int fd = open("/proc/self/exe", O_RDONLY);
	CHECK(fd >= 0);
	for (int i = 0; i < 64; i++)
		CHECK(mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0) != MAP_FAILED);
	close(fd);

	uintptr_t low, top, our_low, our_top;
	own_stack(&low, &top);
	CHECK(main_stack_bounds((uintptr_t)__libc_stack_end, &our_low, &our_top));
	CHECK_EQ_U64(our_low, low);
	CHECK_EQ_U64(our_top, top);
	/* A frame of this function lies within. */
	CHECK((uintptr_t)&fd >= our_low && (uintptr_t)&fd < our_top);
	CHECK(main_stack_bounds_from_maps((uintptr_t)__libc_stack_end, &our_low, &our_top));
	CHECK_EQ_U64(our_low, low);
	CHECK_EQ_U64(our_top, top);
	/* An address on no mapping: no bounds. */
	CHECK(!main_stack_bounds(16, &our_low, &our_top));
	CHECK(!main_stack_bounds_from_maps(16, &our_low, &our_top));
	return 0;
}

int main(int argc, char **argv)
{
	static const rlim_t limits[] = {8 << 20,   1 << 20,   256 << 10,    64 << 20,
					128 << 20, 512 << 20, RLIM_INFINITY};

	if (argc > 1 && strcmp(argv[1], "child") == 0)
		return child();
	for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
		pid_t pid = fork();
		CHECK(pid >= 0);
		if (pid == 0) {
			struct rlimit r;
			CHECK(getrlimit(RLIMIT_STACK, &r) == 0);
			r.rlim_cur = limits[i] < r.rlim_max ? limits[i] : r.rlim_max;
			CHECK(setrlimit(RLIMIT_STACK, &r) == 0);
			execl("/proc/self/exe", argv[0], "child", (char *)NULL);
			_exit(127);
		}
		int status;
		CHECK(waitpid(pid, &status, 0) == pid);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			fprintf(stderr, "stack limit %llu: child failed (status %d)\n",
				(unsigned long long)limits[i], status);
			return 1;
		}
	}
	return 0;
}
