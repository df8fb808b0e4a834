/* The loader an executable asks for, see elf_loader.h. */
#define _GNU_SOURCE
#include "elf_loader.h"

#include <elf.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

/* Program headers read at most: more than any real executable has. */
#define PHDRS_MAX 64

static bool glibc_loader_name(const char *path)
{
	const char *slash = strrchr(path, '/'), *file = slash ? slash + 1 : path;

	return !strncmp(file, "ld-linux", 8) || !strncmp(file, "ld64.so", 7) ||
	       !strncmp(file, "ld.so", 5);
}

bool elf_loader_is_other_libc(int fd, char *name, size_t cap)
{
	Elf64_Phdr ph[PHDRS_MAX];
	Elf64_Ehdr eh;
	char path[PATH_MAX];

	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) || eh.e_phentsize != sizeof(Elf64_Phdr) ||
	    !eh.e_phnum || eh.e_phnum > PHDRS_MAX ||
	    pread(fd, ph, eh.e_phnum * sizeof(Elf64_Phdr), (off_t)eh.e_phoff) !=
		(ssize_t)(eh.e_phnum * sizeof(Elf64_Phdr)))
		return false;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		if (ph[i].p_type != PT_INTERP)
			continue;
		size_t want = ph[i].p_filesz < sizeof(path) - 1 ? ph[i].p_filesz : sizeof(path) - 1;
		ssize_t got = pread(fd, path, want, (off_t)ph[i].p_offset);
		if (got <= 0)
			return false; /* exec says what is wrong with it */
		path[got] = '\0';
		if (glibc_loader_name(path))
			return false;
		if (name && cap) {
			size_t n = strnlen(path, cap - 1);
			memcpy(name, path, n);
			name[n] = '\0';
		}
		return true;
	}
	return false;
}
