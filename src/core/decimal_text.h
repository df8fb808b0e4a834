/* Numbers as memplan reads them from its options and variables (percentages,
 * seconds): digits with an optional fraction ("30", "2.5"), nothing else. Not
 * strtod's hexadecimal, exponents, signs, spaces or "inf", which a user
 * rarely means and which read as something else ("1e1" is 10). Pure: the
 * preload library uses it too. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Reads text into *out if it is such a number (and finite); false if not. */
bool decimal_text_parse(const char *text, double *out);

/* Writes v (finite, at least 0) into buf (cap bytes, 32 suffice) as such a
 * number, the shortest that reads back as v: 1048576, not %g's 1.04858e+06,
 * which a script reads as 1048580. Returns buf. */
char *decimal_text_format(char *buf, size_t cap, double v);
