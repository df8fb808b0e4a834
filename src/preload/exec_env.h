/* The environment of an exec: a program run by another C library's loader
 * (musl's) gets it without memplan in LD_PRELOAD. That loader cannot load
 * memplan's library, built on glibc, and would not start the program at all
 * (exit 127): a build that runs a musl tool would break under memplan. Every
 * other exec keeps its environment as it is.
 *
 * Each exec of the program costs a look at its ELF headers (open, three
 * preads, close); only one that needs it costs a mapping for the copy. All
 * of it is safe in a vfork child: system calls only, nothing allocated from
 * the heap. */
#pragma once

#include <stdbool.h>

/* The environment for executing the program at path (as execve finds it),
 * open at fd (fexecve), at path under dirfd (execveat's flags), or found in
 * PATH as execvp finds it: envp itself, or a copy without memplan's
 * libraries in LD_PRELOAD. Give the result to exec_env_done after the call. */
char *const *exec_env_for_path(const char *path, char *const envp[]);
char *const *exec_env_for_fd(int fd, char *const envp[]);
char *const *exec_env_for_at(int dirfd, const char *path, int flags, char *const envp[]);
char *const *exec_env_for_search(const char *file, char *const envp[]);

/* Gives back what exec_env_for_* made, if it made anything (the exec failed,
 * or spawned a child). */
void exec_env_done(char *const *env, char *const envp[]);
