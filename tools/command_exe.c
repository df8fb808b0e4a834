/* What a command's executable is, see command_exe.h. */
#define _GNU_SOURCE
#include "command_exe.h"

#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "elf_loader.h"
#include "file_io.h"

/* The runtimes of the sanitizers that replace the allocator, as gcc and clang
 * name them (libasan.so.8, libclang_rt.asan-x86_64.so). UndefinedBehavior-
 * Sanitizer has none, and runs under memplan as it is. */
static const char *const sanitizer_runtimes[] = {
    "libasan.",		  "libhwasan.",		 "libtsan.",	      "liblsan.",
    "libclang_rt.asan",	  "libclang_rt.hwasan",	 "libclang_rt.tsan", "libclang_rt.msan",
    "libclang_rt.lsan",
};

static bool sanitizer_runtime(const char *needed)
{
	for (size_t i = 0; i < sizeof(sanitizer_runtimes) / sizeof(sanitizer_runtimes[0]); i++)
		if (!strncmp(needed, sanitizer_runtimes[i], strlen(sanitizer_runtimes[i])))
			return true;
	return false;
}

/* The file offset of virtual address v, from the PT_LOAD headers, or -1. */
static off_t file_offset(const Elf64_Phdr *ph, unsigned count, uint64_t v)
{
	for (unsigned i = 0; i < count; i++)
		if (ph[i].p_type == PT_LOAD && v >= ph[i].p_vaddr &&
		    v - ph[i].p_vaddr < ph[i].p_filesz)
			return (off_t)(v - ph[i].p_vaddr + ph[i].p_offset);
	return -1;
}

/* Whether the dynamic section at [at, at + bytes) of fd names a sanitizer's
 * runtime among the libraries it needs; the name goes to runtime. */
static bool needs_sanitizer(int fd, const Elf64_Phdr *ph, unsigned count, off_t at,
			    uint64_t bytes, char *runtime, size_t cap)
{
	Elf64_Dyn dyn[512];
	uint64_t n = bytes / sizeof(Elf64_Dyn), strtab = 0;
	off_t strings;

	if (n > sizeof(dyn) / sizeof(dyn[0]))
		n = sizeof(dyn) / sizeof(dyn[0]);
	if (pread(fd, dyn, n * sizeof(Elf64_Dyn), at) != (ssize_t)(n * sizeof(Elf64_Dyn)))
		return false;
	for (uint64_t i = 0; i < n && dyn[i].d_tag != DT_NULL; i++)
		if (dyn[i].d_tag == DT_STRTAB)
			strtab = dyn[i].d_un.d_ptr;
	if (!strtab || (strings = file_offset(ph, count, strtab)) < 0)
		return false;
	for (uint64_t i = 0; i < n && dyn[i].d_tag != DT_NULL; i++) {
		char name[256];
		ssize_t got;
		if (dyn[i].d_tag != DT_NEEDED ||
		    (got = pread(fd, name, sizeof(name) - 1, strings + (off_t)dyn[i].d_un.d_val)) <= 0)
			continue;
		name[got] = '\0';
		if (sanitizer_runtime(name)) {
			snprintf(runtime, cap, "%s", name);
			return true;
		}
	}
	return false;
}

/* Whether exec of the file st describes changes the process's credentials, so
 * that the kernel marks it secure (AT_SECURE) and the loader drops
 * LD_PRELOAD's paths. A file system mounted nosuid ignores the bits. */
static bool runs_as_another(const char *path, const struct stat *st)
{
	struct statvfs fs;
	bool uid = (st->st_mode & S_ISUID) && st->st_uid != getuid();
	bool gid = (st->st_mode & S_ISGID) && (st->st_mode & S_IXGRP) && st->st_gid != getgid();

	return (uid || gid) && !(statvfs(path, &fs) == 0 && (fs.f_flag & ST_NOSUID));
}

static enum command_exe exe_file_kind(const char *path, char *runtime, size_t cap)
{
	enum command_exe kind = COMMAND_EXE_DYNAMIC;
	Elf64_Phdr ph[64];
	Elf64_Ehdr eh;
	/* Without blocking: a FIFO there is no program (exec then refuses it, as
	 * a shell's does), and an open of it would wait for a writer for good. */
	struct stat st;
	int fd = file_open_regular(path, &st);

	if (fd < 0)
		return kind;
	if (runs_as_another(path, &st)) {
		close(fd);
		return COMMAND_EXE_SETID;
	}
	if (pread(fd, &eh, sizeof(eh), 0) == (ssize_t)sizeof(eh) &&
	    !memcmp(eh.e_ident, ELFMAG, SELFMAG) && eh.e_ident[EI_CLASS] == ELFCLASS64 &&
	    (eh.e_type == ET_EXEC || eh.e_type == ET_DYN) &&
	    eh.e_phentsize == sizeof(Elf64_Phdr) && eh.e_phnum > 0 &&
	    eh.e_phnum <= sizeof(ph) / sizeof(ph[0]) &&
	    pread(fd, ph, eh.e_phnum * sizeof(Elf64_Phdr), (off_t)eh.e_phoff) ==
		(ssize_t)(eh.e_phnum * sizeof(Elf64_Phdr))) {
		bool interpreter = false;
		for (unsigned i = 0; i < eh.e_phnum; i++)
			interpreter |= ph[i].p_type == PT_INTERP;
		if (!interpreter) {
			kind = COMMAND_EXE_STATIC;
		} else if (elf_loader_is_other_libc(fd, runtime, cap)) {
			kind = COMMAND_EXE_OTHER_LIBC;
		} else {
			for (unsigned i = 0; i < eh.e_phnum; i++)
				if (ph[i].p_type == PT_DYNAMIC &&
				    needs_sanitizer(fd, ph, eh.e_phnum, (off_t)ph[i].p_offset,
						    ph[i].p_filesz, runtime, cap))
					kind = COMMAND_EXE_SANITIZED;
		}
	}
	close(fd);
	return kind;
}

enum command_exe command_exe_kind(const char *cmd, char *runtime, size_t cap)
{
	const char *path = getenv("PATH");
	char candidate[PATH_MAX];
	struct stat st;

	if (strchr(cmd, '/'))
		return exe_file_kind(cmd, runtime, cap);
	if (!path)
		path = "/bin:/usr/bin";
	while (*path) {
		size_t dir = strcspn(path, ":");
		/* An empty entry is the working directory, as for execvp. */
		int n = dir ? snprintf(candidate, sizeof(candidate), "%.*s/%s", (int)dir, path, cmd)
			    : snprintf(candidate, sizeof(candidate), "%s", cmd);
		if (n > 0 && (size_t)n < sizeof(candidate) && stat(candidate, &st) == 0 &&
		    S_ISREG(st.st_mode) && access(candidate, X_OK) == 0)
			return exe_file_kind(candidate, runtime, cap);
		path += dir + (path[dir] == ':');
	}
	return COMMAND_EXE_DYNAMIC;
}
