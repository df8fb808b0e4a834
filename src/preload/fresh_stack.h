/* A stack of memplan's own for the work a fatal signal's handler does.
 *
 * A program may handle a crash on a small alternate signal stack carved from
 * its heap and raise the signal again from there (CPython's faulthandler does,
 * with about 12 KiB, two signal frames of which hold the CPU's state): memplan's
 * hook then ran on what was left, and writing the plan overflowed it into the
 * heap below ("malloc(): unsorted double linked list corrupted" under record).
 * So the hook's work runs on a stack mapped for it, with a guard page under it. */
#pragma once

/* Calls fn(arg) on a fresh stack of FRESH_STACK_BYTES, or on the current one if
 * none can be mapped or the machine is not x86-64. Async-signal-safe; the
 * stack is not given back (the process is ending). */
void fresh_stack_run(void (*fn)(void *), void *arg);
