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
