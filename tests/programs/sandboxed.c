/* A program that sandboxes itself halfway through, as vsftpd, apt's methods,
 * man-db's helpers and browsers do: it allocates, restricts what it may do, and
 * allocates on (more call sites, more occurrences than before, a forked child)
 * under the restriction. It allows every system call that glibc's allocator
 * and its own work need, and nothing for memplan: whatever memplan does that
 * the sandbox forbids ends the process (SIGSYS) or fails.
 *
 * usage: sandboxed MODE ROUNDS
 *   prctl      a seccomp filter set with prctl(PR_SET_SECCOMP) that ends the
 *              process at any open or openat
 *   syscall    the same filter set with syscall(SYS_seccomp), as libseccomp does
 *   allowlist  a filter that ends the process at any system call but the few
 *              this program makes: read, write, fstat, brk, mmap, munmap,
 *              mremap, madvise, mprotect, futex, getpid, stdio's ioctl and
 *              lseek, fork's clone and set_robust_list, wait4, exit (set with
 *              syscall(SYS_seccomp))
 *   landlock   a Landlock ruleset that forbids every file access (prints
 *              "landlock unavailable" and does nothing else where the kernel has
 *              no Landlock)
 *   chroot     a chroot to the current directory (prints "chroot unavailable"
 *              and does nothing else without the right to)
 *   clonefs    a chroot to the current directory made for the process by a
 *              child that shares its memory and file system context
 *              (clone with CLONE_VM | CLONE_VFORK | CLONE_FS, then the chroot
 *              system call by syscall()), as Chromium's zygote has it made
 *   tsync      the open-forbidding filter set for every thread at once
 *              (SECCOMP_FILTER_FLAG_TSYNC) while two threads allocate
 *   probe      libseccomp's probes of what the kernel supports (calls that
 *              fail), and no sandbox
 * Prints a checksum of what it allocated, and its child's.
 *
 * usage: sandboxed exec CMD [ARG...]
 *   runs CMD in a sandbox it inherits, as man-db runs its helpers: a filter
 *   that answers ENOSYS to any open that may create a file. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define KILL BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS)
#define ALLOW BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)
#define LOAD_NR BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr))
#define ALLOW_NR(nr) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), ALLOW
/* Every filter's start: another architecture's calls end the process, and the
 * system call's number is loaded. */
#define START                                                                                      \
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),                   \
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0), KILL, LOAD_NR

static void no_new_privs(void)
{
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
		perror("PR_SET_NO_NEW_PRIVS");
		exit(1);
	}
}

static unsigned long filter_flags; /* SECCOMP_FILTER_FLAG_TSYNC in tsync mode */

static void install(struct sock_filter *filter, unsigned short len, bool by_prctl)
{
	struct sock_fprog program = {.len = len, .filter = filter};

	no_new_privs();
	int r = by_prctl ? prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program)
			 : (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, filter_flags, &program);
	if (r != 0) {
		perror("seccomp");
		exit(1);
	}
}

static void forbid_open(bool by_prctl)
{
	struct sock_filter filter[] = {
	    START,
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat, 1, 0),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_open, 0, 1),
	    KILL,
	    ALLOW,
	};
	install(filter, sizeof(filter) / sizeof(filter[0]), by_prctl);
}

static void allow_only_own(void)
{
	struct sock_filter filter[] = {
	    START,
	    ALLOW_NR(__NR_read),
	    ALLOW_NR(__NR_write),
	    ALLOW_NR(__NR_fstat),
	    ALLOW_NR(__NR_newfstatat),
	    ALLOW_NR(__NR_brk),
	    ALLOW_NR(__NR_mmap),
	    ALLOW_NR(__NR_munmap),
	    ALLOW_NR(__NR_mremap),
	    ALLOW_NR(__NR_madvise),
	    ALLOW_NR(__NR_mprotect),
	    ALLOW_NR(__NR_futex),
	    ALLOW_NR(__NR_getpid),
	    ALLOW_NR(__NR_ioctl),
	    ALLOW_NR(__NR_lseek),
	    ALLOW_NR(__NR_clone),
	    ALLOW_NR(__NR_set_robust_list),
	    ALLOW_NR(__NR_wait4),
	    ALLOW_NR(__NR_exit),
	    ALLOW_NR(__NR_exit_group),
	    ALLOW_NR(__NR_rt_sigreturn),
	    KILL,
	};
	install(filter, sizeof(filter) / sizeof(filter[0]), false);
}

static void forbid_creating_files(void)
{
	struct sock_filter filter[] = {
	    START,
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat, 0, 2),
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
	    BPF_JUMP(BPF_JMP | BPF_JA, 2, 0, 0),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_open, 0, 3),
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1])),
	    BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, O_CREAT, 0, 1),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
	    ALLOW,
	};
	install(filter, sizeof(filter) / sizeof(filter[0]), false);
}

/* Returns false where the kernel has no Landlock. */
static bool forbid_files(void)
{
	struct landlock_ruleset_attr attr = {
	    .handled_access_fs = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |
				 LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR |
				 LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |
				 LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR |
				 LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_SOCK |
				 LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |
				 LANDLOCK_ACCESS_FS_MAKE_SYM,
	};
	int ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0);
	if (ruleset < 0)
		return false;
	no_new_privs();
	if (syscall(SYS_landlock_restrict_self, ruleset, 0) != 0) {
		perror("landlock_restrict_self");
		exit(1);
	}
	close(ruleset);
	return true;
}

/* What libseccomp asks the kernel at its first use: each call fails. */
static void probe(void)
{
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_STRICT, 1, NULL) != -1 || errno != EINVAL)
		puts("probe: strict mode with a flag was not refused");
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, NULL) != -1 ||
	    errno != EFAULT)
		puts("probe: a filter without a program was not refused");
}

static _Atomic uint64_t checksum;

/* Blocks from call sites at several depths, so that the run past the
 * sandbox's start reaches occurrences and sites the first part did not. */
static __attribute__((noinline)) char *make(size_t size, int depth)
{
	if (depth > 0)
		return make(size, depth - 1);
	char *p = malloc(size);
	memset(p, (int)(size & 0x7f), size);
	return p;
}

static void churn(long rounds, int depths)
{
	char *held[64] = {0};

	for (long i = 0; i < rounds; i++) {
		int k = (int)(i % 64);
		if (held[k]) {
			checksum += (unsigned char)held[k][0];
			free(held[k]);
		}
		held[k] = make(16 + (size_t)(i * 37 % 600), (int)(i % depths));
		if (i % 97 == 0)
			held[k] = realloc(held[k], 700 + (size_t)(i % 300));
		if (i % 1000 == 0) {
			char *big = calloc(1, 300000); /* glibc maps it */
			checksum += (unsigned char)big[i % 300000];
			free(big);
		}
	}
	for (int k = 0; k < 64; k++)
		free(held[k]);
}

/* The child of clonefs: it chroots for its parent, whose file system context
 * it shares. */
static int chroot_for_parent(void *unused)
{
	(void)unused;
	return syscall(SYS_chroot, ".") == 0 ? 0 : 1;
}

/* Returns false without the right to chroot. */
static bool chroot_by_child(void)
{
	static char stack[64 * 1024] __attribute__((aligned(16)));
	int status;
	pid_t child = clone(chroot_for_parent, stack + sizeof(stack),
			    CLONE_VM | CLONE_VFORK | CLONE_FS | SIGCHLD, NULL);
	if (child < 0 || waitpid(child, &status, 0) != child)
		return false;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static long thread_rounds;

static void *worker(void *unused)
{
	(void)unused;
	churn(thread_rounds, 7);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], "exec")) {
		forbid_creating_files();
		execvp(argv[2], argv + 2);
		perror(argv[2]);
		return 127;
	}
	if (argc != 3) {
		fprintf(stderr, "usage: sandboxed prctl|syscall|allowlist|landlock|chroot|clonefs|tsync|probe ROUNDS\n");
		return 2;
	}
	const char *mode = argv[1];
	long rounds = atol(argv[2]);

	churn(rounds / 10, 3);
	fflush(stdout);
	pthread_t workers[2];
	bool threads = !strcmp(mode, "tsync");
	/* As a sandboxed program with threads must: glibc's malloc opens
	 * /proc/sys/vm/overcommit_memory the first time it shrinks a thread's
	 * heap (an ending thread's, say), which the filter forbids. */
	if (threads)
		mallopt(M_TRIM_THRESHOLD, 1 << 30);
	for (int t = 0; threads && t < 2; t++) {
		thread_rounds = rounds;
		if (pthread_create(&workers[t], NULL, worker, NULL) != 0)
			return 1;
	}
	if (!strcmp(mode, "prctl") || !strcmp(mode, "syscall"))
		forbid_open(!strcmp(mode, "prctl"));
	else if (threads) {
		filter_flags = SECCOMP_FILTER_FLAG_TSYNC;
		forbid_open(false);
	}
	else if (!strcmp(mode, "allowlist"))
		allow_only_own();
	else if (!strcmp(mode, "landlock")) {
		if (!forbid_files()) {
			puts("landlock unavailable");
			return 0;
		}
	} else if (!strcmp(mode, "chroot") || !strcmp(mode, "clonefs")) {
		if (!strcmp(mode, "chroot") ? chroot(".") != 0 : !chroot_by_child()) {
			puts("chroot unavailable");
			return 0;
		}
	} else if (!strcmp(mode, "probe"))
		probe();
	else
		return 2;
	churn(rounds, 9);
	for (int t = 0; threads && t < 2; t++)
		pthread_join(workers[t], NULL);
	pid_t child = fork();
	if (child == 0) {
		churn(rounds / 4, 5);
		printf("child %llu\n", (unsigned long long)checksum);
		fflush(stdout);
		_exit(0);
	}
	int status = 0;
	if (child < 0 || waitpid(child, &status, 0) != child || status != 0)
		printf("child failed: %d\n", status);
	printf("%s %llu\n", mode, (unsigned long long)checksum);
	return 0;
}
