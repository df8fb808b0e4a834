/* Plain decimal numbers, see decimal_text.h. */
#include "decimal_text.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

bool decimal_text_parse(const char *text, double *out)
{
	const char *p = text;

	if (!p || !is_digit(*p))
		return false;
	while (is_digit(*p))
		p++;
	if (*p == '.' && is_digit(p[1]))
		for (p++; is_digit(*p);)
			p++;
	if (*p)
		return false;
	double v = strtod(text, NULL);
	if (!isfinite(v))
		return false;
	*out = v;
	return true;
}

char *decimal_text_format(char *buf, size_t cap, double v)
{
	/* Whole numbers as they are; else the fewest decimals that read back. */
	for (int decimals = 0; decimals <= 17; decimals++) {
		snprintf(buf, cap, "%.*f", decimals, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	return buf;
}
