/* The real allocator and the real process functions that memplan wraps.
 *
 * Allocation goes to glibc's __libc_* entry points, which are plain exported
 * functions: calling them needs no dlsym, so bootstrap cannot recurse (dlsym itself
 * may call calloc). The few functions without a __libc_ alias are resolved once
 * with dlsym(RTLD_NEXT) under pthread_once, with the guard set, so any allocation
 * dlsym makes goes to __libc_calloc. */
#pragma once

#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stddef.h>
#include <sys/types.h>

void *__libc_malloc(size_t size);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *ptr, size_t size);
void __libc_free(void *ptr);
void *__libc_memalign(size_t align, size_t size);
void *__libc_valloc(size_t size);
void *__libc_pvalloc(size_t size);

struct real_functions {
	size_t (*malloc_usable_size)(void *ptr);
	void *(*aligned_alloc)(size_t align, size_t size);
	int (*execve)(const char *path, char *const argv[], char *const envp[]);
	int (*execvpe)(const char *file, char *const argv[], char *const envp[]);
	int (*fexecve)(int fd, char *const argv[], char *const envp[]);
	int (*execveat)(int dirfd, const char *path, char *const argv[], char *const envp[],
			int flags);
	int (*posix_spawn)(pid_t *pid, const char *path, const posix_spawn_file_actions_t *actions,
			   const posix_spawnattr_t *attr, char *const argv[], char *const envp[]);
	int (*posix_spawnp)(pid_t *pid, const char *file, const posix_spawn_file_actions_t *actions,
			    const posix_spawnattr_t *attr, char *const argv[], char *const envp[]);
	void (*exit_now)(int status) __attribute__((noreturn)); /* _exit */
	int (*pthread_create)(pthread_t *thread, const pthread_attr_t *attr,
			      void *(*routine)(void *), void *arg);
	int (*sigaction)(int sig, const struct sigaction *act, struct sigaction *old);
	void (*(*signal)(int sig, void (*handler)(int)))(int);
	int (*dlclose)(void *handle);
	void *(*dlopen)(const char *file, int mode);
	int (*prctl)(int option, unsigned long a2, unsigned long a3, unsigned long a4,
		     unsigned long a5);
	long (*syscall)(long number, long a1, long a2, long a3, long a4, long a5, long a6);
	int (*chroot)(const char *path);
	int (*clone)(int (*fn)(void *), void *stack, int flags, void *arg, ...);
};

/* The resolved functions; resolves them on first use. Thread-safe. Never NULL
 * members except execveat on a libc without it. */
const struct real_functions *real_libc(void);
