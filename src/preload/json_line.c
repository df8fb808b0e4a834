/* Malloc-free JSON Lines output, see json_line.h. */
#include "json_line.h"

#include <errno.h>
#include <string.h>

#include "stats_file.h"
#include "utf8.h"

static void put(struct json_line *j, const char *s, size_t n)
{
	if (j->len + n >= sizeof(j->buf)) {
		j->overflow = true;
		return;
	}
	memcpy(j->buf + j->len, s, n);
	j->len += n;
}

/* Bytes that are not valid UTF-8 (a Latin-1 path) are written as \u00XX, the
 * byte as a code point, so that the line stays valid JSON. */
static void put_escaped(struct json_line *j, const char *s, size_t left)
{
	static const char hex[] = "0123456789abcdef";

	while (left) {
		unsigned char c = (unsigned char)*s;
		size_t n = utf8_sequence_length(s, left);
		if (c == '"' || c == '\\') {
			char esc[2] = {'\\', (char)c};
			put(j, esc, 2);
		} else if (c < 0x20 || !n) {
			char esc[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
			put(j, esc, 6);
		} else {
			put(j, s, n);
			s += n;
			left -= n;
			continue;
		}
		s++;
		left--;
	}
}

/* A string too long for UTF8_JSON_STRING_MAX is cut as utf8_json_cut says, in
 * the middle, marked "...": its head and its file name stay. */
static void put_str(struct json_line *j, const char *s)
{
	size_t len = strlen(s), head, tail;

	put(j, "\"", 1);
	bool cut = utf8_json_cut(s, len, UTF8_JSON_STRING_MAX, &head, &tail);
	put_escaped(j, s, head);
	if (cut)
		put(j, "...", 3);
	put_escaped(j, s + tail, len - tail);
	put(j, "\"", 1);
}

static void put_key(struct json_line *j, const char *key)
{
	if (j->need_comma)
		put(j, ",", 1);
	put_str(j, key);
	put(j, ":", 1);
	j->need_comma = true;
}

void json_begin(struct json_line *j)
{
	j->len = 0;
	j->overflow = false;
	j->need_comma = false;
	put(j, "{", 1);
}

void json_key_u64(struct json_line *j, const char *key, uint64_t v)
{
	char digits[21];
	size_t n = 0;
	char out[21];

	put_key(j, key);
	do {
		digits[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (size_t i = 0; i < n; i++)
		out[i] = digits[n - 1 - i];
	put(j, out, n);
}

void json_key_bool(struct json_line *j, const char *key, bool v)
{
	put_key(j, key);
	if (v)
		put(j, "true", 4);
	else
		put(j, "false", 5);
}

void json_key_str(struct json_line *j, const char *key, const char *s)
{
	put_key(j, key);
	put_str(j, s);
}

void json_key_object(struct json_line *j, const char *key)
{
	put_key(j, key);
	put(j, "{", 1);
	j->need_comma = false;
}

void json_end(struct json_line *j)
{
	put(j, "}", 1);
	j->need_comma = true;
}

int json_append_line(struct json_line *j, const char *path)
{
	if (j->overflow)
		return -ENOBUFS;
	put(j, "\n", 1);
	return stats_file_append(path, j->buf, j->len, JSON_PIPE_WAIT_MS);
}
