/* utf8_sequence_length against a reference written the other way round: decode
 * by the bit patterns, then accept only a code point that is a scalar value and
 * whose shortest encoding is the bytes read. Every sequence of up to three
 * bytes, and random four-byte ones. */
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
	return 0;
}
