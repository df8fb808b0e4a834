/* utf8_sequence_length against a reference written the other way round: decode
 * by the bit patterns, then accept only a code point that is a scalar value and
 * whose shortest encoding is the bytes read. Every sequence of up to three
 * bytes, and random four-byte ones. utf8_json_cut on random strings: what it
 * keeps fits, on whole characters, and a long path keeps its file name. */
#include <string.h>

#include "check.h"
#include "utf8.h"

static size_t encode(unsigned long cp, unsigned char *out)
{
	if (cp < 0x80) {
		out[0] = (unsigned char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (unsigned char)(0xc0 | cp >> 6);
		out[1] = (unsigned char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (unsigned char)(0xe0 | cp >> 12);
		out[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
		out[2] = (unsigned char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (unsigned char)(0xf0 | cp >> 18);
	out[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3f));
	out[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
	out[3] = (unsigned char)(0x80 | (cp & 0x3f));
	return 4;
}

static size_t reference(const unsigned char *b, size_t avail)
{
	size_t n = b[0] < 0x80 ? 1 : (b[0] & 0xe0) == 0xc0 ? 2 : (b[0] & 0xf0) == 0xe0 ? 3
				 : (b[0] & 0xf8) == 0xf0 ? 4 : 0;
	unsigned long cp;
	unsigned char again[4];

	if (!n || n > avail)
		return 0;
	cp = n == 1 ? b[0] : (unsigned long)(b[0] & (0x7f >> n));
	for (size_t i = 1; i < n; i++) {
		if ((b[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (b[i] & 0x3f);
	}
	if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	if (encode(cp, again) != n || memcmp(again, b, n))
		return 0;
	return n;
}

/* The bytes s[from..to) take escaped in JSON, or SIZE_MAX if from or to
 * splits a character that reading from the front finds. */
static size_t json_width(const char *s, size_t len, size_t from, size_t to)
{
	size_t width = 0, at = 0;

	while (at < to) {
		unsigned char c = (unsigned char)s[at];
		size_t n = utf8_sequence_length(s + at, len - at);
		size_t w = c == '"' || c == '\\' ? 2 : c < 0x20 || !n ? 6 : n;
		if (!n || w != n)
			n = 1;
		if (at < from && at + n > from)
			return SIZE_MAX;
		if (at >= from)
			width += w;
		at += n;
	}
	return at == to ? width : SIZE_MAX;
}

static void check_cut(const char *s, size_t len, size_t max)
{
	size_t head, tail;
	bool cut = utf8_json_cut(s, len, max, &head, &tail);

	if (!cut) {
		CHECK(json_width(s, len, 0, len) <= max);
		CHECK(head == len && tail == len);
		return;
	}
	CHECK(json_width(s, len, 0, len) > max);
	CHECK(head <= tail && tail <= len);
	size_t kept = json_width(s, len, 0, head), end = json_width(s, len, tail, len);
	CHECK(kept != SIZE_MAX && end != SIZE_MAX);
	CHECK(kept + 3 + end <= max);
	CHECK(end <= (max - 3) / 4 * 3);
}

int main(void)
{
	unsigned char b[4];
	uint64_t seed = 0x5eed;

	CHECK_EQ_U64(utf8_sequence_length("", 0), 0);
	for (unsigned long v = 0; v < 1ul << 24; v++) {
		b[0] = (unsigned char)(v >> 16);
		b[1] = (unsigned char)(v >> 8);
		b[2] = (unsigned char)v;
		for (size_t avail = 1; avail <= 3; avail++)
			CHECK_EQ_U64(utf8_sequence_length((const char *)b, avail), reference(b, avail));
	}
	for (int i = 0; i < 4000000; i++) {
		uint64_t r = check_random(&seed);
		b[0] = (unsigned char)(0xf0 | (r & 7)); /* lead bytes of four-byte forms, and beyond */
		b[1] = (unsigned char)(r >> 8);
		b[2] = (unsigned char)(0x80 | (r >> 16 & 0x7f));
		b[3] = (unsigned char)(r >> 24);
		CHECK_EQ_U64(utf8_sequence_length((const char *)b, 4), reference(b, 4));
	}
	/* Every scalar value's own encoding is accepted whole. */
	for (unsigned long cp = 0; cp <= 0x10ffff; cp++) {
		if (cp >= 0xd800 && cp <= 0xdfff)
			continue;
		size_t n = encode(cp, b);
		CHECK_EQ_U64(utf8_sequence_length((const char *)b, n), n);
	}

	static char text[6000];
	for (int i = 0; i < 20000; i++) {
		uint64_t r = check_random(&seed);
		size_t len = r % sizeof(text), max = 3 + (r >> 16) % 3000;
		for (size_t k = 0; k < len; k++) {
			uint64_t v = check_random(&seed);
			/* Mostly ASCII, with stray bytes, quotes and controls among them. */
			text[k] = v % 4 ? (char)('a' + v % 26) : (char)(v >> 8);
			if (!text[k])
				text[k] = '/';
		}
		check_cut(text, len, max);
	}
	/* A path of 1,500 Latin-1 bytes keeps its file name of 255 whole. */
	size_t len = 0, head, tail;
	for (int d = 0; d < 6; d++) {
		text[len++] = '/';
		memset(text + len, 0xe9, 250);
		len += 250;
	}
	text[len++] = '/';
	memset(text + len, 0xff, 255);
	len += 255;
	CHECK(utf8_json_cut(text, len, UTF8_JSON_STRING_MAX, &head, &tail));
	CHECK(tail == len - 256 && head > 0);
	CHECK(json_width(text, len, 0, head) + 3 + json_width(text, len, tail, len) <=
	      UTF8_JSON_STRING_MAX);
	return 0;
}
