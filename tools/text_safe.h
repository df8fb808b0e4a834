/* Names from a plan or a statistics file, as the text reports print them.
 * Those names (paths, arguments, symbols) are the recorded program's, or any
 * a hostile file holds: a newline would split a report's line, and an escape
 * sequence would reach the terminal (move the cursor, retitle the window). So
 * every control character is written as an escape: \n, \t, \r, or \xHH for
 * the others of C0 and DEL, and for those of C1 as UTF-8 encodes them (which
 * some terminals obey as they do C0's). A byte that starts no UTF-8 sequence
 * is written \xHH too: a terminal reading Latin-1 takes 0x80..0x9f for C1
 * controls. Everything else (UTF-8) passes as it is. JSON and SVG escape for
 * themselves (json_print.h, plan_svg.c). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Appends text[0..len) to out, escaped, from *at on; out has cap bytes and stays
 * NUL-terminated (cap > 0). Returns false if not all of it fit: out then ends
 * on a whole escape. */
bool text_safe_append(char *out, size_t cap, size_t *at, const char *text, size_t len);

/* Writes the string s to f, escaped. */
void text_safe_fputs(const char *s, FILE *f);

/* A copy of the string s, escaped (malloc'ed; NULL if out of memory): for a
 * path the user gave, printed in a report and in messages. */
char *text_safe_dup(const char *s);

/* Ends out, a text of len bytes cut short, with "..." in place of its last
 * characters, on a whole UTF-8 character: a cut in the middle of a C++ name
 * would read as a whole one. Leaves a text of fewer than 3 bytes as it is. */
void text_safe_mark_cut(char *out, size_t len);
