/* UTF-8 validation, for writers of JSON: a JSON document is Unicode text, but
 * paths, arguments and symbols are bytes that need not be valid UTF-8 (a
 * Latin-1 file name, a truncated argument). Pure: no state, no allocation,
 * async-signal-safe. */
#pragma once

#include <stddef.h>

/* The length (1 to 4) of the well-formed UTF-8 sequence that starts s, of at
 * most avail bytes; 0 if s starts no such sequence (a stray continuation byte,
 * an overlong form, a surrogate, a code point above U+10FFFF, or a sequence cut
 * short). avail is 0 only for an empty string. */
size_t utf8_sequence_length(const char *s, size_t avail);
