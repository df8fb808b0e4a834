/* Figures as people read them in reports: sizes in binary units ("2.37 MiB"),
 * counts with thousands separators ("12,717"), or exact bytes for --bytes. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Writes bytes into out (always NUL-terminated): "512 B", "1.5 KiB",
 * "2.37 MiB", "237 MiB" (three significant digits at most, no trailing zeros),
 * or with exact, "2490032 bytes". Returns out. */
char *size_text(char *out, size_t cap, uint64_t bytes, bool exact);

/* Writes n with a comma between each group of three digits ("12,717").
 * Returns out. */
char *count_text(char *out, size_t cap, uint64_t n);
