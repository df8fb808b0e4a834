/* Error lines from inside the preload library, without stdio and without malloc:
 * the message is assembled in a stack buffer and written to stderr with one
 * write(2), so it is safe inside allocation paths and at exit. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Writes "memplan: " followed by the NULL-terminated list of strings and a newline
 * to stderr. Long messages are cut. Returns whether the line was written (not if
 * the program closed stderr, as coreutils do before they exit).
 * Async-signal-safe; does not allocate. */
bool log_error(const char *first, ...) __attribute__((sentinel));

/* Formats v in decimal into buf (at least 21 bytes) and returns buf. */
char *log_u64(char *buf, uint64_t v);
