/* Resolution of the real libc functions. See real_libc.h. */
#define _GNU_SOURCE
#include "real_libc.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "deepbind.h"
#include "guard.h"

static struct real_functions real;
static pthread_once_t real_once = PTHREAD_ONCE_INIT;

/* Used only if dlsym cannot find _exit, which glibc always has. */
static void __attribute__((noreturn)) exit_by_syscall(int status)
{
	for (;;)
		syscall(SYS_exit_group, status);
}

static void resolve(void)
{
	guard_enter();
	real.malloc_usable_size = dlsym(RTLD_NEXT, "malloc_usable_size");
	real.aligned_alloc = dlsym(RTLD_NEXT, "aligned_alloc");
	real.execve = dlsym(RTLD_NEXT, "execve");
	real.execvpe = dlsym(RTLD_NEXT, "execvpe");
	real.fexecve = dlsym(RTLD_NEXT, "fexecve");
	real.execveat = dlsym(RTLD_NEXT, "execveat");
	real.posix_spawn = dlsym(RTLD_NEXT, "posix_spawn");
	real.posix_spawnp = dlsym(RTLD_NEXT, "posix_spawnp");
	real.exit_now = dlsym(RTLD_NEXT, "_exit");
	real.pthread_create = dlsym(RTLD_NEXT, "pthread_create");
	real.sigaction = dlsym(RTLD_NEXT, "sigaction");
	real.signal = dlsym(RTLD_NEXT, "signal");
	real.dlclose = dlsym(RTLD_NEXT, "dlclose");
	real.dlopen = dlsym(RTLD_NEXT, "dlopen");
	*(void **)&real.prctl = dlsym(RTLD_NEXT, "prctl");
	*(void **)&real.syscall = dlsym(RTLD_NEXT, "syscall");
	real.chroot = dlsym(RTLD_NEXT, "chroot");
	real.clone = dlsym(RTLD_NEXT, "clone");
	if (!real.exit_now)
		real.exit_now = exit_by_syscall;
	/* memplan's dlopen jumps to it from now on (deepbind_entry.S). */
	deepbind_real_dlopen = real.dlopen;
	guard_leave();
}

const struct real_functions *real_libc(void)
{
	pthread_once(&real_once, resolve);
	return &real;
}
