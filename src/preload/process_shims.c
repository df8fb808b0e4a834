/* The exported process functions: every exec and _exit/_Exit first finishes the
 * current mode (record writes the plan of the image that is about to go away,
 * replay its statistics), since neither runs atexit handlers or destructors;
 * pthread_create gives each new thread its lineage name (thread_lineage.h); and
 * dlclose tells the call-site caches when a module went away (callsite.h).
 * The execl* forms are turned into arrays here because glibc's own execl calls an
 * internal execve that no preload can see. An exec or spawn of a program of
 * another C library leaves memplan out of its LD_PRELOAD (exec_env.h). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "callsite.h"
#include "exec_env.h"
#include "guard.h"
#include "init.h"
#include "real_libc.h"
#include "record.h"
#include "strict.h"
#include "thread_lineage.h"

#define MEMPLAN_EXPORT __attribute__((visibility("default")))

extern char **environ;

/* The upper bound glibc's execl uses too; enough for any real command line. */
#define EXECL_ARGS_MAX 4096

MEMPLAN_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	preload_finish(false);
	char *const *env = exec_env_for_path(path, envp);
	int r = real_libc()->execve(path, argv, env);
	exec_env_done(env, envp);
	return r;
}

MEMPLAN_EXPORT int execv(const char *path, char *const argv[])
{
	return execve(path, argv, environ);
}

MEMPLAN_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	preload_finish(false);
	char *const *env = exec_env_for_search(file, envp);
	int r = real_libc()->execvpe(file, argv, env);
	exec_env_done(env, envp);
	return r;
}

MEMPLAN_EXPORT int execvp(const char *file, char *const argv[])
{
	return execvpe(file, argv, environ);
}

MEMPLAN_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	preload_finish(false);
	char *const *env = exec_env_for_fd(fd, envp);
	int r = real_libc()->fexecve(fd, argv, env);
	exec_env_done(env, envp);
	return r;
}

MEMPLAN_EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
			    int flags)
{
	if (!real_libc()->execveat) {
		errno = ENOSYS;
		return -1;
	}
	preload_finish(false);
	char *const *env = exec_env_for_at(dirfd, path, flags, envp);
	int r = real_libc()->execveat(dirfd, path, argv, env, flags);
	exec_env_done(env, envp);
	return r;
}

/* Not an exec of this process: nothing to finish. glibc's own spawns (system,
 * popen) call it inside libc, where no preload sees them; they run /bin/sh,
 * whose exec of the program comes here. */
MEMPLAN_EXPORT int posix_spawn(pid_t *pid, const char *path,
			       const posix_spawn_file_actions_t *actions,
			       const posix_spawnattr_t *attr, char *const argv[],
			       char *const envp[])
{
	char *const *env = exec_env_for_path(path, envp);
	int r = real_libc()->posix_spawn(pid, path, actions, attr, argv, env);
	exec_env_done(env, envp);
	return r;
}

MEMPLAN_EXPORT int posix_spawnp(pid_t *pid, const char *file,
				const posix_spawn_file_actions_t *actions,
				const posix_spawnattr_t *attr, char *const argv[],
				char *const envp[])
{
	char *const *env = exec_env_for_search(file, envp);
	int r = real_libc()->posix_spawnp(pid, file, actions, attr, argv, env);
	exec_env_done(env, envp);
	return r;
}

/* Collects the arguments of an execl-style call, after arg0, into argv. Returns
 * the envp that follows the NULL when with_env, else environ; NULL if too many. */
static char **collect_args(const char *arg0, va_list ap, char **argv, int with_env)
{
	int n = 0;

	argv[n++] = (char *)arg0;
	while (arg0 && (argv[n] = va_arg(ap, char *)) != NULL) {
		if (++n == EXECL_ARGS_MAX)
			return NULL;
	}
	argv[n] = NULL;
	return with_env ? va_arg(ap, char **) : environ;
}

#define EXECL_BODY(call, with_env)                                                                 \
	do {                                                                                       \
		char **argv = __libc_malloc((EXECL_ARGS_MAX + 1) * sizeof(char *));                \
		char **envp;                                                                       \
		va_list ap;                                                                        \
		int r;                                                                             \
		if (!argv) {                                                                       \
			errno = ENOMEM;                                                            \
			return -1;                                                                 \
		}                                                                                  \
		va_start(ap, arg0);                                                                \
		envp = collect_args(arg0, ap, argv, with_env);                                     \
		va_end(ap);                                                                        \
		if (!envp) {                                                                       \
			__libc_free(argv);                                                         \
			errno = E2BIG;                                                             \
			return -1;                                                                 \
		}                                                                                  \
		r = call;                                                                          \
		__libc_free(argv);                                                                 \
		return r;                                                                          \
	} while (0)

MEMPLAN_EXPORT int execl(const char *path, const char *arg0, ...)
{
	EXECL_BODY(execve(path, argv, envp), 0);
}

MEMPLAN_EXPORT int execle(const char *path, const char *arg0, ...)
{
	EXECL_BODY(execve(path, argv, envp), 1);
}

MEMPLAN_EXPORT int execlp(const char *file, const char *arg0, ...)
{
	EXECL_BODY(execvpe(file, argv, envp), 0);
}

struct thread_start {
	void *(*routine)(void *);
	void *arg;
	uint64_t lineage;
	sigset_t mask; /* the creator's on entry, or the one attr sets */
};

static void *start_named_thread(void *p)
{
	struct thread_start start = *(struct thread_start *)p;

	__libc_free(p);
	/* A signal the creator held while libc made this thread (it arrived
	 * inside memplan: program_handlers.h) is blocked in the mask libc gave
	 * it, and this thread would never unblock it. */
	pthread_sigmask(SIG_SETMASK, &start.mask, NULL);
	thread_lineage = start.lineage;
	/* Taking its frame's address also makes this function keep a frame
	 * pointer, by which replay walks the program's stacks through it
	 * (callsite.c, own_frame_by_frame_pointer). */
	callsite_stack_base = (uintptr_t)__builtin_frame_address(0);
	guard_enter();
	callsite_note_stack();
	guard_leave();
	void *result = start.routine(start.arg);
	if (preload_mode_now() == PRELOAD_RECORD) {
		guard_enter();
		record_thread_ended();
		guard_leave();
	}
	return result;
}

MEMPLAN_EXPORT int pthread_create(pthread_t *thread, const pthread_attr_t *attr,
				  void *(*routine)(void *), void *arg)
{
	struct thread_start *start;
	int r;

	if (preload_mode_now() == PRELOAD_OFF)
		return real_libc()->pthread_create(thread, attr, routine, arg);
	start = __libc_malloc(sizeof(*start));
	if (!start)
		return EAGAIN;
	*start = (struct thread_start){routine, arg, thread_lineage_next_child(), {{0}}};
	if (!attr || pthread_attr_getsigmask_np(attr, &start->mask) == PTHREAD_ATTR_NO_SIGMASK_NP)
		pthread_sigmask(SIG_SETMASK, NULL, &start->mask);
	if (preload_mode_now() == PRELOAD_RECORD) {
		guard_enter();
		record_thread_created(start->lineage);
		guard_leave();
	}
	/* What libc allocates for the thread (the dynamic loader its TLS) is
	 * libc's, not the program's: memplan's frame is on its stack. */
	guard_enter();
	r = real_libc()->pthread_create(thread, attr, start_named_thread, start);
	guard_leave();
	if (r)
		__libc_free(start);
	return r;
}

MEMPLAN_EXPORT void _exit(int status)
{
	preload_finish(false);
	real_libc()->exit_now(strict_exit_status(status));
}

MEMPLAN_EXPORT void _Exit(int status)
{
	_exit(status);
}

MEMPLAN_EXPORT int dlclose(void *handle)
{
	int r = real_libc()->dlclose(handle);

	if (r == 0) {
		guard_enter();
		callsite_after_dlclose();
		guard_leave();
	}
	return r;
}
