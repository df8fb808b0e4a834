/* Plain decimal numbers, see decimal_text.h. */
#include "decimal_text.h"

#include <math.h>
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
