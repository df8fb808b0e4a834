/* Reading DWARF (libdw's line tables and DIEs) recurses deeply: under a small
 * stack limit (`ulimit -s 128`) memplan record crashed with SIGSEGV once the
 * command had ended, in dwarf_getsrclines, and lost the command's status.
 * What reads debug information runs on a thread with a stack of a set size,
 * whatever the limit. (Raising the limit in the process would not do: the
 * main thread's stack cannot grow past what the limit was at exec.) */
#pragma once

#include <stddef.h>

/* The stack the reading needs. Mapped as the thread uses it. */
#define DEEP_STACK_BYTES ((size_t)64 << 20)

/* Runs fn(arg) on a thread with a DEEP_STACK_BYTES stack and returns what it
 * returns; runs it on the calling thread if no such thread can be made. */
int deep_stack_run(int (*fn)(void *arg), void *arg);

/* A command's main function run so: deep_stack_run of main(argc, argv). */
int deep_stack_main(int (*main)(int argc, char **argv), int argc, char **argv);
