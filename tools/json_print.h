/* Writing JSON for the subcommands' --json output. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "plan_file.h"

/* Writes the first len bytes of s as a JSON string, quotes included: control
 * characters are escaped, and so is each byte that is not part of valid UTF-8,
 * as \u00XX (the byte as a code point), so the output is always valid JSON. */
void json_print_string(FILE *out, const char *s, size_t len);

/* The same for a NUL-terminated string, or null for NULL. */
void json_print_text(FILE *out, const char *s);

/* Writes image's arguments as a JSON array of strings. */
void json_print_args(FILE *out, const struct plan_image *image);

/* Writes one function of a call chain as an object: function, module, file
 * (null if unknown, as function may be), line (0 if unknown), inlined. */
void json_print_function(FILE *out, const char *function, const char *module, const char *file,
			 uint32_t line, bool inlined);
