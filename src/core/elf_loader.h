/* Which dynamic loader an executable asks for (its PT_INTERP). memplan's
 * preload library is built on glibc: another C library's loader (musl's
 * /lib/ld-musl-x86_64.so.1) cannot load it, and with it in LD_PRELOAD will not
 * start the program at all. The CLI refuses to record such a command, and the
 * library leaves itself out of LD_PRELOAD when a process execs one. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Whether the executable open at fd is run by another C library's loader
 * than glibc's: it names one (PT_INTERP) whose file name is not glibc's
 * (ld-linux*, ld64.so*, ld.so*; the directory may be any, as Nix's is). That
 * loader's path goes to name (cap bytes, cut) if name is not NULL. A file that
 * is no 64-bit ELF executable, or names no loader (static), is not. Reads
 * with pread; async-signal-safe; does not allocate. */
bool elf_loader_is_other_libc(int fd, char *name, size_t cap);
