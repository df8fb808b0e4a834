/* Sets errno before allocation calls, and before fork, and counts the calls
 * that succeeded and changed it: glibc's free never does (POSIX 2024), its
 * malloc and realloc do not when they succeed, and fork returns to the child
 * with errno as it was. With a second argument "full", uses up its
 * descriptors first, so that whatever memplan must open (the plan, for
 * entries past those read at start) fails. With "stacks", first makes
 * madvise(MADV_POPULATE_WRITE) fail as a kernel before 5.14 does (a seccomp
 * filter), then allocates from hundreds of stacks, which grow memplan's
 * per-thread caches of call sites, whose new pages it maps that way. With
 * "huge", first asks 30 times for sizes no allocator gives (over PTRDIFF_MAX,
 * by malloc, calloc and posix_memalign), each failing with ENOMEM (else it
 * exits 3): no allocations, to be counted as neither served nor missed. Prints
 * the counts and the number of rounds. */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define MADV_POPULATE_WRITE_ADVICE 23 /* Linux 5.14 */

static int changed_malloc, changed_free, changed_realloc, changed_fork;

/* Stacks that the "stacks" mode allocates from. */
#define STACK_DEPTHS 400

#define SITE(n)                                                                                    \
	static void *site##n(size_t s)                                                             \
	{                                                                                          \
		errno = 4242;                                                                      \
		void *p = malloc(s);                                                               \
		if (p && errno != 4242)                                                            \
			changed_malloc++;                                                          \
		return p;                                                                          \
	}
SITE(0)
SITE(1)
SITE(2)
SITE(3)
SITE(4) SITE(5) SITE(6) SITE(7)

    /* prctl by the system call itself: what the filter below stands for is a
     * kernel's, not a sandbox the program sets up, which memplan's own prctl
     * would see and act on. x86-64. */
    static long raw_prctl(long option, long a, long b)
{
	long ret;
	register long r10 __asm__("r10") = 0;
	register long r8 __asm__("r8") = 0;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"((long)SYS_prctl), "D"(option), "S"(a), "d"(b), "r"(r10), "r"(r8)
			 : "rcx", "r11", "memory");
	return ret;
}

/* Makes madvise(..., MADV_POPULATE_WRITE) fail with EINVAL from now on, as on
 * a kernel before 5.14. */
static void refuse_populate_write(void)
{
	struct sock_filter filter[] = {
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_madvise, 0, 3),
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, MADV_POPULATE_WRITE_ADVICE, 0, 1),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EINVAL),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog program = {.len = sizeof(filter) / sizeof(filter[0]), .filter = filter};

	if (raw_prctl(PR_SET_NO_NEW_PRIVS, 1, 0) ||
	    raw_prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, (long)&program)) {
		fputs("errno_keep: the seccomp filter was refused\n", stderr);
		exit(2);
	}
}

/* A malloc below n frames of itself: each depth is a stack of its own. */
static __attribute__((noinline)) void *deep_malloc(int n, size_t size)
{
	void *p;

	if (n > 0)
		p = deep_malloc(n - 1, size);
	else {
		errno = 4242;
		p = malloc(size);
		if (p && errno != 4242)
			changed_malloc++;
	}
	asm volatile("" ::: "memory"); /* no tail call: each depth keeps its frame */
	return p;
}

/* A child forked without exec: under replay it looks for a plan of its own. */
static void fork_once(void)
{
	errno = 4545;
	pid_t pid = fork();
	if (pid == 0)
		_exit(errno == 4545 ? 0 : 1);
	int status;
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		exit(2);
	changed_fork += WEXITSTATUS(status) != 0;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 100000;
	void *(*sites[])(size_t) = {site0, site1, site2, site3, site4, site5, site6, site7};
	void *keep[256] = {0};

	if (argc > 2 && !strcmp(argv[2], "full"))
		while (fopen("/dev/null", "r"))
			;
	if (argc > 2 && !strcmp(argv[2], "huge"))
		for (size_t i = 0; i < 10; i++) {
			void *volatile p;
			errno = 0;
			if ((p = malloc(SIZE_MAX - i)) || errno != ENOMEM)
				exit(3);
			errno = 0;
			if ((p = calloc(SIZE_MAX / 2, 3 + i)) || errno != ENOMEM)
				exit(3);
			if (posix_memalign((void **)&p, 64, SIZE_MAX - 64 * i) != ENOMEM)
				exit(3);
		}
	if (argc > 2 && !strcmp(argv[2], "stacks")) {
		refuse_populate_write();
		for (int i = 0; i < 20 * STACK_DEPTHS; i++) {
			void *p = deep_malloc(i % STACK_DEPTHS, 24);
			errno = 4343;
			free(p);
			changed_free += errno != 4343;
		}
	}
	for (int i = 0; i < rounds; i++) {
		int k = (i * 7919) % 256;
		if (i % 25000 == 0)
			fork_once();
		if (!keep[k]) {
			keep[k] = sites[i % 8](16 + (size_t)(i * 13 % 2000));
			continue;
		}
		errno = 4343;
		if (i % 3) {
			free(keep[k]);
			changed_free += errno != 4343;
			keep[k] = NULL;
			continue;
		}
		void *q = realloc(keep[k], 10 + (size_t)(i % 900));
		if (q) {
			changed_realloc += errno != 4343;
			keep[k] = q;
		}
	}
	printf("%d rounds; errno changed by malloc %d, free %d, realloc %d, fork %d\n", rounds,
	       changed_malloc, changed_free, changed_realloc, changed_fork);
	return 0;
}
