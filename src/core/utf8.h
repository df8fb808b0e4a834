/* UTF-8 validation, for writers of JSON: a JSON document is Unicode text, but
 * paths, arguments and symbols are bytes that need not be valid UTF-8 (a
 * Latin-1 file name, a truncated argument). Pure: no state, no allocation,
 * async-signal-safe. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* The most bytes a string takes in a statistics line (the preload library's
 * json_line.h), escaped and without its quotes: a longer one is cut
 * (utf8_json_cut), so that the line always has room for its numbers. */
#define UTF8_JSON_STRING_MAX 2048

/* The length (1 to 4) of the well-formed UTF-8 sequence that starts s, of at
 * most avail bytes; 0 if s starts no such sequence (a stray continuation byte,
 * an overlong form, a surrogate, a code point above U+10FFFF, or a sequence cut
 * short). avail is 0 only for an empty string. */
size_t utf8_sequence_length(const char *s, size_t avail);

/* Where the string s of len bytes is cut to take at most max bytes (max >= 3)
 * escaped in JSON as the statistics lines escape it (a byte that starts no
 * UTF-8 sequence and a control character as \u00XX, " and \ after a
 * backslash): its first *head bytes, "...", and its bytes from *tail on, each
 * part of whole characters. The tail takes up to three quarters of max,
 * which for UTF8_JSON_STRING_MAX holds a whole file name (NAME_MAX bytes,
 * each escaped to six, and its slash): readers of a path match on its file
 * name. Returns false, with *head and *tail set to len, if s fits whole. A
 * reader can cut a path so to compare it with one read back from a line. */
bool utf8_json_cut(const char *s, size_t len, size_t max, size_t *head, size_t *tail);
