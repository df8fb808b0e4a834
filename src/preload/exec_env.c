/* Leaving memplan out of an exec of another C library's program, see
 * exec_env.h. */
#define _GNU_SOURCE
#include "exec_env.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "elf_loader.h"

#define PRELOAD_VAR "LD_PRELOAD="

/* Whether the LD_PRELOAD entry from s, len bytes, is one of memplan's
 * libraries (libmemplan.so, or another build's of that name). */
static bool is_memplan_entry(const char *s, size_t len)
{
	const char *name = s;

	for (size_t i = 0; i < len; i++)
		if (s[i] == '/')
			name = s + i + 1;
	return (size_t)(s + len - name) >= strlen("libmemplan") &&
	       !memcmp(name, "libmemplan", strlen("libmemplan"));
}

/* The copy of envp with LD_PRELOAD's memplan entries left out, in a mapping
 * of its own (the vector, then the new LD_PRELOAD string); envp itself if it
 * names none, or on failure. Preserves errno. */
static char *const *without_memplan(char *const envp[])
{
	const int saved = errno;
	size_t count = 0, at = SIZE_MAX;

	/* The last LD_PRELOAD: the loader goes by it. */
	for (; envp && envp[count]; count++)
		if (!strncmp(envp[count], PRELOAD_VAR, strlen(PRELOAD_VAR)))
			at = count;
	if (at == SIZE_MAX)
		return envp;
	const char *list = envp[at] + strlen(PRELOAD_VAR);
	const size_t list_len = strlen(list);
	const size_t bytes = (count + 1) * sizeof(char *) + strlen(PRELOAD_VAR) + list_len + 1;
	char **copy = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (copy == MAP_FAILED) {
		errno = saved;
		return envp;
	}
	char *preload = (char *)(copy + count + 1), *out = preload + strlen(PRELOAD_VAR);
	bool dropped = false;
	memcpy(preload, PRELOAD_VAR, strlen(PRELOAD_VAR));
	/* The loader splits the list at spaces and colons. */
	for (size_t i = 0; i < list_len;) {
		size_t len = strcspn(list + i, ": ");
		if (len && is_memplan_entry(list + i, len)) {
			dropped = true;
		} else if (len) {
			if (out > preload + strlen(PRELOAD_VAR))
				*out++ = ':';
			memcpy(out, list + i, len);
			out += len;
		}
		i += len + (i + len < list_len);
	}
	*out = '\0';
	if (!dropped) {
		munmap(copy, bytes);
		errno = saved;
		return envp;
	}
	size_t n = 0;
	for (size_t i = 0; i < count; i++)
		if (i != at)
			copy[n++] = envp[i];
		else if (out > preload + strlen(PRELOAD_VAR))
			copy[n++] = preload; /* other libraries stay preloaded */
	copy[n] = NULL;
	errno = saved;
	return copy;
}

char *const *exec_env_for_fd(int fd, char *const envp[])
{
	const int saved = errno;
	const bool other = fd >= 0 && elf_loader_is_other_libc(fd, NULL, 0);

	errno = saved;
	return other ? without_memplan(envp) : envp;
}

char *const *exec_env_for_at(int dirfd, const char *path, int flags, char *const envp[])
{
	const int saved = errno;
	int fd;

	if (path && !*path && (flags & AT_EMPTY_PATH))
		return exec_env_for_fd(dirfd, envp);
	fd = openat(dirfd, path,
		    O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY |
			(flags & AT_SYMLINK_NOFOLLOW ? O_NOFOLLOW : 0));
	char *const *env = exec_env_for_fd(fd, envp);
	if (fd >= 0)
		close(fd);
	errno = saved;
	return env;
}

char *const *exec_env_for_path(const char *path, char *const envp[])
{
	return exec_env_for_at(AT_FDCWD, path, 0, envp);
}

char *const *exec_env_for_search(const char *file, char *const envp[])
{
	const char *path = getenv("PATH");

	if (!file || !*file || strchr(file, '/'))
		return exec_env_for_path(file, envp);
	if (!path)
		path = "/bin:/usr/bin"; /* as glibc's execvp */
	const size_t file_len = strlen(file);
	if (file_len > NAME_MAX)
		return envp;
	/* The first file in PATH that can be executed: the one execvp runs,
	 * unless it then fails to. */
	char candidate[PATH_MAX];
	while (*path) {
		size_t dir = strcspn(path, ":");
		if (dir + 1 + file_len < sizeof(candidate)) {
			size_t n = 0;
			if (dir) { /* an empty entry is the working directory */
				memcpy(candidate, path, dir);
				candidate[dir] = '/';
				n = dir + 1;
			}
			memcpy(candidate + n, file, file_len + 1);
			const int saved = errno;
			const bool runs = access(candidate, X_OK) == 0;
			errno = saved;
			if (runs)
				return exec_env_for_path(candidate, envp);
		}
		path += dir + (path[dir] == ':');
	}
	return envp;
}

void exec_env_done(char *const *env, char *const envp[])
{
	if (env == envp)
		return;
	const int saved = errno;
	size_t count = 0, bytes;

	for (; envp && envp[count]; count++)
		;
	/* As without_memplan mapped it: from envp's count and its last
	 * LD_PRELOAD (the one the loader goes by). */
	for (size_t i = count; i-- > 0;)
		if (!strncmp(envp[i], PRELOAD_VAR, strlen(PRELOAD_VAR))) {
			bytes = (count + 1) * sizeof(char *) + strlen(envp[i]) + 1;
			munmap((void *)env, bytes);
			break;
		}
	errno = saved;
}
