/* The program sandboxing itself: prctl(PR_SET_SECCOMP), and the seccomp and
 * landlock_restrict_self system calls made through syscall() (as libseccomp,
 * Chromium and minijail make them), and chroot, also through a clone() child
 * that shares the file system context (CLONE_FS: Chromium's zygote has such a
 * child chroot to an empty directory for it). A program that restricts its
 * own system calls allows the ones it makes, not memplan's: a filter that ends
 * the process at an open() would end it when replay next read the plan, or
 * when record wrote it at exit, where the program alone runs to the end; after
 * a chroot, the plan's path names nothing. So memplan seals itself first
 * (preload_seal): it finishes while it still may, and opens no file after
 * that. */
#define _GNU_SOURCE
#include <linux/capability.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stdarg.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "init.h"
#include "real_libc.h"

#define MEMPLAN_EXPORT __attribute__((visibility("default")))

/* Seals memplan before a call that would install a seccomp mode: strict mode
 * (read, write and exit only) leaves it no system call at all. Not for the
 * probes libseccomp makes at its first use, which the kernel refuses (strict
 * mode with a flag, a filter without a program): a probe that sealed would
 * stop a program that never sandboxes itself. */
static void seal_for_seccomp(unsigned long mode, unsigned long flags, const void *program)
{
	if (mode == SECCOMP_SET_MODE_STRICT && !flags && !program)
		preload_seal(true);
	else if (mode == SECCOMP_SET_MODE_FILTER && program)
		preload_seal(false);
}

/* prctl's form of the same: PR_SET_SECCOMP, the mode, the filter's program. */
static void seal_for_prctl(long option, unsigned long mode, unsigned long program)
{
	if (option != PR_SET_SECCOMP)
		return;
	if (mode == SECCOMP_MODE_STRICT)
		seal_for_seccomp(SECCOMP_SET_MODE_STRICT, 0, NULL);
	else if (mode == SECCOMP_MODE_FILTER)
		seal_for_seccomp(SECCOMP_SET_MODE_FILTER, 0, (const void *)program);
}

MEMPLAN_EXPORT int prctl(int option, ...)
{
	va_list ap;

	va_start(ap, option);
	unsigned long a2 = va_arg(ap, unsigned long), a3 = va_arg(ap, unsigned long);
	unsigned long a4 = va_arg(ap, unsigned long), a5 = va_arg(ap, unsigned long);
	va_end(ap);
	seal_for_prctl(option, a2, a3);
	return real_libc()->prctl(option, a2, a3, a4, a5);
}

/* Whether a chroot can succeed: the thread has CAP_SYS_CHROOT. A program that
 * tries one without it, and carries on when refused, is not sealed. */
static bool may_chroot(void)
{
	struct __user_cap_header_struct header = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {{0}};

	if (real_libc()->syscall(SYS_capget, (long)&header, (long)data, 0, 0, 0, 0) != 0)
		return true; /* unknown: sealing is the safe side */
	return data[CAP_SYS_CHROOT / 32].effective >> (CAP_SYS_CHROOT % 32) & 1;
}

static void seal_for_chroot(void)
{
	if (may_chroot())
		preload_seal(false);
}

/* As glibc's syscall(), six arguments read whatever the caller passed (the
 * registers and stack slots are there either way). */
MEMPLAN_EXPORT long syscall(long number, ...)
{
	va_list ap;
	long a[6];

	va_start(ap, number);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	switch (number) {
	case SYS_seccomp:
		seal_for_seccomp((unsigned long)a[0], (unsigned long)a[1], (const void *)a[2]);
		break;
	case SYS_prctl:
		seal_for_prctl(a[0], (unsigned long)a[1], (unsigned long)a[2]);
		break;
	case SYS_chroot:
		seal_for_chroot();
		break;
#ifdef SYS_landlock_restrict_self
	case SYS_landlock_restrict_self:
		preload_seal(false);
		break;
#endif
	}
	return real_libc()->syscall(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}

MEMPLAN_EXPORT int chroot(const char *path)
{
	seal_for_chroot();
	return real_libc()->chroot(path);
}

/* A child process that shares the file system context may chroot (or chdir)
 * for its parent: the parent seals first, where a chroot can succeed. Sealed
 * in the child alone, a CLONE_VM child would seal its parent's memory without
 * finishing for it, which only the parent's own process does. A thread
 * (CLONE_THREAD) is the process: its chroot seals as any other. */
MEMPLAN_EXPORT int clone(int (*fn)(void *), void *stack, int flags, void *arg, ...)
{
	va_list ap;

	va_start(ap, arg);
	pid_t *parent_tid = va_arg(ap, pid_t *);
	void *tls = va_arg(ap, void *);
	pid_t *child_tid = va_arg(ap, pid_t *);
	va_end(ap);
	if ((flags & CLONE_FS) && !(flags & CLONE_THREAD))
		seal_for_chroot();
	return real_libc()->clone(fn, stack, flags, arg, parent_tid, tls, child_tid);
}
