/* Names in GitHub Markdown, see markdown_text.h. */
#include "markdown_text.h"

#include <ctype.h>
#include <string.h>

#include "text_safe.h"

/* Characters that are markup outside a code span. An '_' between letters or
 * digits is not (GitHub reads no emphasis inside a word): "gate_app" stays. */
#define MARKUP "\\`*_[]<>|~&!#"

static bool word_byte(const char *text, size_t len, size_t i)
{
	return i < len && (isalnum((unsigned char)text[i]) || (unsigned char)text[i] >= 0x80);
}

static bool put_escaped(char *out, size_t cap, size_t *at, char c)
{
	if (*at + 2 >= cap)
		return false;
	out[(*at)++] = '\\';
	out[(*at)++] = c;
	out[*at] = '\0';
	return true;
}

/* Appends text, each byte of it that escape (NULL: none) says is markup
 * after a backslash. */
static bool append(char *out, size_t cap, size_t *at, const char *text, size_t len,
		   bool (*escape)(const char *text, size_t len, size_t i))
{
	size_t from = 0;

	for (size_t i = 0; i < len; i++) {
		if (!escape || !escape(text, len, i))
			continue;
		if (!text_safe_append(out, cap, at, text + from, i - from) ||
		    !put_escaped(out, cap, at, text[i]))
			return false;
		from = i + 1;
	}
	return text_safe_append(out, cap, at, text + from, len - from);
}

static bool is_pipe(const char *text, size_t len, size_t i)
{
	(void)len;
	return text[i] == '|';
}

static bool is_markup(const char *text, size_t len, size_t i)
{
	if (!text[i] || !strchr(MARKUP, text[i]))
		return false;
	return text[i] != '_' || !i || !word_byte(text, len, i - 1) || !word_byte(text, len, i + 1);
}

static bool put_ticks(char *out, size_t cap, size_t *at, size_t ticks, bool pad)
{
	for (size_t k = 0; k < ticks; k++)
		if (!text_safe_append(out, cap, at, "`", 1))
			return false;
	return !pad || text_safe_append(out, cap, at, " ", 1);
}

bool markdown_code_append(char *out, size_t cap, size_t *at, const char *text, size_t len,
			  bool table)
{
	size_t run = 0, longest = 0;

	for (size_t i = 0; i < len; i++) {
		run = text[i] == '`' ? run + 1 : 0;
		if (run > longest)
			longest = run;
	}
	return put_ticks(out, cap, at, longest + 1, longest > 0) &&
	       append(out, cap, at, text, len, table ? is_pipe : NULL) &&
	       (!longest || text_safe_append(out, cap, at, " ", 1)) &&
	       put_ticks(out, cap, at, longest + 1, false);
}

bool markdown_text_append(char *out, size_t cap, size_t *at, const char *text, size_t len)
{
	return append(out, cap, at, text, len, is_markup);
}
