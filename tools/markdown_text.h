/* Names in GitHub Markdown, shown as they are: a C++ operator|, a command
 * with a backtick, a module named *x*. Each appends to out (cap bytes, cap >
 * 0) from *at on, keeps it NUL-terminated, escapes control characters as
 * text_safe.h does, and returns false if not all of it fit. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* text as a code span: between one backtick more than its longest run of
 * them, padded with spaces if it has any ("`` a`b ``"). In a table cell
 * (table), each '|' is written "\|", which GitHub reads as the cell's own,
 * even in a code span. */
bool markdown_code_append(char *out, size_t cap, size_t *at, const char *text, size_t len,
			  bool table);

/* text outside a code span: the characters Markdown could read as markup, or
 * as the end of a table cell, after a backslash. */
bool markdown_text_append(char *out, size_t cap, size_t *at, const char *text, size_t len);
