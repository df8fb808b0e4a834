/* Error lines from inside the preload library, without stdio and without malloc:
 * the message is assembled in a stack buffer and written to stderr with one
 * write(2), so it is safe inside allocation paths and at exit. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

/* Writes "memplan: " followed by the NULL-terminated list of strings and a newline
 * to fd. Long messages are cut. Returns whether the line was written.
 * Async-signal-safe; does not allocate. */
bool log_error_to(int fd, const char *first, ...) __attribute__((sentinel));

/* The same to stderr; not written if the program closed stderr, as coreutils
 * do before they exit. */
#define log_error(...) log_error_to(STDERR_FILENO, __VA_ARGS__)

/* Lines are cut to this many bytes, the newline included. */
#define LOG_LINE_MAX 1024

/* The same, said once per command rather than once per process: for what
 * every process of a multi-process command (a shell script, pyenv's shims)
 * would find at its start, a bad variable or a plan it cannot use, which the
 * raw form once said 35 times for one python3 run. A hash of the line goes to
 * LOG_SAID_ENV in the environment, which the processes it starts inherit;
 * one that finds it there says nothing, and returns true. Calls setenv: only
 * at start-up, never in a signal handler. */
#define LOG_SAID_ENV   "MEMPLAN_SAID"
#define LOG_SAID_MARKS 8
bool log_error_once(const char *first, ...) __attribute__((sentinel));

/* Formats v in decimal into buf (at least 21 bytes) and returns buf. */
char *log_u64(char *buf, uint64_t v);
