/* Whether a command is a statically linked executable: the dynamic loader never
 * runs for it, so LD_PRELOAD, and with it memplan, cannot see its allocations.
 * memplan record and replay say so instead of leaving the user with a missing
 * plan or statistics. */
#pragma once

#include <stdbool.h>

/* True if cmd, looked up in PATH as execvp does (as is if it holds a '/'), is an
 * ELF executable without a program interpreter. False for anything else,
 * including a script (its interpreter is another program) or a command not
 * found. */
bool static_exe_command(const char *cmd);
