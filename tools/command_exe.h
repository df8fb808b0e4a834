/* What the preload library can do with a command's executable. A statically
 * linked one never runs the dynamic loader, so LD_PRELOAD, and with it memplan,
 * cannot see its allocations. One built with a sanitizer that has an allocator
 * of its own (AddressSanitizer, ThreadSanitizer, LeakSanitizer...) must keep
 * it: AddressSanitizer refuses to start after any preloaded library, and the
 * others would no longer see the blocks memplan served. A set-user-ID program
 * (mount, su) gets no preloaded library at all. memplan record and
 * replay say so instead of leaving the user with a missing plan, a sanitizer's
 * message or a sanitizer that checks nothing. */
#pragma once

#include <stddef.h>

enum command_exe {
	COMMAND_EXE_DYNAMIC, /* or anything else: a script, a command not found */
	COMMAND_EXE_STATIC,
	COMMAND_EXE_SANITIZED,
	/* Set-user-ID or set-group-ID to another user or group than memplan's:
	 * the loader runs it in secure mode, which ignores LD_PRELOAD. */
	COMMAND_EXE_SETID,
	/* Run by another C library's loader (musl's /lib/ld-musl-x86_64.so.1),
	 * which cannot load memplan's library, built on glibc, and will not start
	 * the program at all with it in LD_PRELOAD. */
	COMMAND_EXE_OTHER_LIBC,
};

/* What cmd is, looked up in PATH as execvp does (as is if it holds a '/'). For
 * COMMAND_EXE_SANITIZED, the sanitizer's runtime library (its DT_NEEDED name)
 * goes to runtime, cut to cap bytes; for COMMAND_EXE_OTHER_LIBC, the loader's
 * path. A script is COMMAND_EXE_DYNAMIC: its
 * interpreter is another program. */
enum command_exe command_exe_kind(const char *cmd, char *runtime, size_t cap);
