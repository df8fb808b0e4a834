/* Figures for reports, see size_text.h. */
#include "size_text.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

char *size_text(char *out, size_t cap, uint64_t bytes, bool exact)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
	double v = (double)bytes;
	unsigned u = 0;

	if (exact) {
		snprintf(out, cap, "%" PRIu64 " bytes", bytes);
		return out;
	}
	while (v >= 1024 && u + 1 < sizeof(units) / sizeof(units[0])) {
		v /= 1024;
		u++;
	}
	/* Rounding may carry into the next unit: 1023.9 KiB is 1 MiB. */
	if (u && v >= 999.5 && u + 1 < sizeof(units) / sizeof(units[0])) {
		v /= 1024;
		u++;
	}
	char number[32];
	snprintf(number, sizeof(number), "%.*f", u == 0 || v >= 100 ? 0 : v >= 10 ? 1 : 2, v);
	if (strchr(number, '.')) {
		size_t n = strlen(number);
		while (number[n - 1] == '0')
			number[--n] = '\0';
		if (number[n - 1] == '.')
			number[n - 1] = '\0';
	}
	snprintf(out, cap, "%s %s", number, units[u]);
	return out;
}

char *count_text(char *out, size_t cap, uint64_t n)
{
	char digits[24], grouped[32];
	size_t len = (size_t)snprintf(digits, sizeof(digits), "%" PRIu64, n), k = 0;

	for (size_t i = 0; i < len; i++) {
		if (i && (len - i) % 3 == 0)
			grouped[k++] = ',';
		grouped[k++] = digits[i];
	}
	grouped[k] = '\0';
	snprintf(out, cap, "%s", grouped);
	return out;
}
