/* Numbers as memplan reads them from its options and variables (percentages,
 * seconds): digits with an optional fraction ("30", "2.5"), nothing else. Not
 * strtod's hexadecimal, exponents, signs, spaces or "inf", which a user
 * rarely means and which read as something else ("1e1" is 10). Pure: the
 * preload library uses it too. */
#pragma once

#include <stdbool.h>

/* Reads text into *out if it is such a number (and finite); false if not. */
bool decimal_text_parse(const char *text, double *out);
