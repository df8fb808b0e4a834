/* UTF-8 validation, see utf8.h. The table of well-formed byte sequences is
 * Unicode's (Table 3-7): the second byte's range depends on the first. */
#include "utf8.h"

size_t utf8_sequence_length(const char *s, size_t avail)
{
	const unsigned char *b = (const unsigned char *)s;
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n;

	if (!avail)
		return 0;
	if (b[0] < 0x80)
		return 1;
	if (b[0] >= 0xc2 && b[0] <= 0xdf)
		n = 2;
	else if (b[0] >= 0xe0 && b[0] <= 0xef)
		n = 3;
	else if (b[0] >= 0xf0 && b[0] <= 0xf4)
		n = 4;
	else
		return 0;
	if (b[0] == 0xe0)
		lo = 0xa0; /* overlong */
	else if (b[0] == 0xed)
		hi = 0x9f; /* surrogates */
	else if (b[0] == 0xf0)
		lo = 0x90; /* overlong */
	else if (b[0] == 0xf4)
		hi = 0x8f; /* above U+10FFFF */
	if (avail < n || b[1] < lo || b[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (b[i] < 0x80 || b[i] > 0xbf)
			return 0;
	return n;
}

/* The bytes the character at s, or its first byte if it starts none, takes
 * escaped in JSON; *n is set to the bytes it spans. */
static size_t json_width(const char *s, size_t avail, size_t *n)
{
	const unsigned char c = (unsigned char)*s;

	*n = utf8_sequence_length(s, avail);
	if (c == '"' || c == '\\') {
		*n = 1;
		return 2;
	}
	if (c < 0x20 || !*n) {
		*n = 1;
		return 6;
	}
	return *n;
}

bool utf8_json_cut(const char *s, size_t len, size_t max, size_t *head, size_t *tail)
{
	const size_t tail_max = (max - 3) / 4 * 3;
	size_t width = 0, used, at, n;

	for (at = 0; at < len; at += n)
		width += json_width(s + at, len - at, &n);
	*head = *tail = len;
	if (width <= max)
		return false;
	/* Characters are found from the front, as a writer finds them: read
	 * backwards, a stray byte can be taken for part of a character. */
	for (at = 0; width > tail_max; at += n)
		width -= json_width(s + at, len - at, &n);
	*tail = at;
	used = width + 3;
	for (at = 0; at < *tail; at += n) {
		size_t w = json_width(s + at, len - at, &n);
		if (used + w > max)
			break;
		used += w;
	}
	*head = at;
	return true;
}
