/* Control characters of names escaped for text reports, see text_safe.h. */
#include "text_safe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"

/* The escape of the control character at text[0..left), into esc (5 bytes
 * and its NUL at most), and how many bytes of text it stands for; 0 if there
 * is none there. */
static size_t escape_at(const unsigned char *text, size_t left, char *esc)
{
	const unsigned char c = text[0];

	if (c == '\n' || c == '\t' || c == '\r') {
		esc[0] = '\\';
		esc[1] = c == '\n' ? 'n' : c == '\t' ? 't' : 'r';
		esc[2] = '\0';
		return 1;
	}
	if (c < 0x20 || c == 0x7f) {
		snprintf(esc, 5, "\\x%02x", c);
		return 1;
	}
	/* U+0080..U+009F: 0xc2 then 0x80..0x9f. */
	if (c == 0xc2 && left > 1 && text[1] >= 0x80 && text[1] <= 0x9f) {
		snprintf(esc, 5, "\\x%02x", text[1]);
		return 2;
	}
	/* A byte that starts no UTF-8 sequence: to a terminal that reads bytes
	 * as Latin-1, 0x80..0x9f are C1 controls (0x9b starts a sequence, as
	 * ESC [ does). */
	if (c >= 0x80 && !utf8_sequence_length((const char *)text, left)) {
		snprintf(esc, 5, "\\x%02x", c);
		return 1;
	}
	return 0;
}

/* How many bytes at text pass as they are: a whole UTF-8 sequence, so that a
 * cut never splits one. */
static size_t verbatim_at(const unsigned char *text, size_t left)
{
	size_t n = text[0] < 0x80 ? 1 : utf8_sequence_length((const char *)text, left);

	return n ? n : 1;
}

bool text_safe_append(char *out, size_t cap, size_t *at, const char *text, size_t len)
{
	const unsigned char *t = (const unsigned char *)text;
	size_t i = 0;

	while (i < len) {
		char esc[5];
		size_t n = escape_at(t + i, len - i, esc);
		const char *put = n ? esc : text + i;
		size_t put_len = n ? strlen(esc) : verbatim_at(t + i, len - i);
		if (*at + put_len >= cap)
			break;
		memcpy(out + *at, put, put_len);
		*at += put_len;
		i += n ? n : put_len;
	}
	out[*at] = '\0';
	return i == len;
}

void text_safe_fputs(const char *s, FILE *f)
{
	const unsigned char *t = (const unsigned char *)s;
	size_t left = strlen(s);

	while (left) {
		char esc[5];
		size_t n = escape_at(t, left, esc);
		if (n)
			fputs(esc, f);
		else
			fwrite(t, 1, n = verbatim_at(t, left), f);
		t += n;
		left -= n;
	}
}

char *text_safe_dup(const char *s)
{
	size_t len = strlen(s), at = 0;
	/* An escape is at most 4 bytes for each byte it stands for. */
	char *out = malloc(4 * len + 1);

	if (out)
		text_safe_append(out, 4 * len + 1, &at, s, len);
	return out;
}

void text_safe_mark_cut(char *out, size_t len)
{
	if (len < 3)
		return;
	len -= 3;
	while (len && ((unsigned char)out[len] & 0xc0) == 0x80)
		len--;
	memcpy(out + len, "...", 4);
}
