/* Static executables, see static_exe.h. */
#define _GNU_SOURCE
#include "static_exe.h"

#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Whether the file at path is an ELF executable with no PT_INTERP segment. */
static bool static_exe_file(const char *path)
{
	Elf64_Ehdr eh;
	bool found = false;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	if (pread(fd, &eh, sizeof(eh), 0) == (ssize_t)sizeof(eh) &&
	    !memcmp(eh.e_ident, ELFMAG, SELFMAG) && eh.e_ident[EI_CLASS] == ELFCLASS64 &&
	    (eh.e_type == ET_EXEC || eh.e_type == ET_DYN) &&
	    eh.e_phentsize == sizeof(Elf64_Phdr) && eh.e_phnum > 0) {
		found = true;
		for (unsigned i = 0; i < eh.e_phnum; i++) {
			Elf64_Phdr ph;
			off_t at = (off_t)(eh.e_phoff + (uint64_t)i * sizeof(ph));
			if (pread(fd, &ph, sizeof(ph), at) != (ssize_t)sizeof(ph) ||
			    ph.p_type == PT_INTERP) {
				found = false; /* unreadable, or dynamic */
				break;
			}
		}
	}
	close(fd);
	return found;
}

bool static_exe_command(const char *cmd)
{
	const char *path = getenv("PATH");
	char candidate[PATH_MAX];
	struct stat st;

	if (strchr(cmd, '/'))
		return static_exe_file(cmd);
	if (!path)
		path = "/bin:/usr/bin";
	while (*path) {
		size_t dir = strcspn(path, ":");
		/* An empty entry is the working directory, as for execvp. */
		int n = dir ? snprintf(candidate, sizeof(candidate), "%.*s/%s", (int)dir, path, cmd)
			    : snprintf(candidate, sizeof(candidate), "%s", cmd);
		if (n > 0 && (size_t)n < sizeof(candidate) && stat(candidate, &st) == 0 &&
		    S_ISREG(st.st_mode) && access(candidate, X_OK) == 0)
			return static_exe_file(candidate);
		path += dir + (path[dir] == ':');
	}
	return false;
}
