/* libFuzzer target for the statistics line parser (tools/stats_line_parse.c),
 * which reads files that other processes wrote: `memplan check --stats FILE`
 * takes any file, a CI job's artifact included. No input may make it read
 * past the line or overflow a field; what it takes has every string ended
 * within its field and no more misses or missed sites than the line holds
 * room for. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stats_lines.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ENDED(field) (strnlen((field), sizeof(field)) < sizeof(field))

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* A line as stats_lines_read gives it: ended by a NUL, no byte past it. */
	char *text = malloc(size + 1);
	struct stats_line line;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (stats_line_parse(text, &line)) {
		if (!ENDED(line.exe) || !ENDED(line.argv0) || !ENDED(line.match) ||
		    !ENDED(line.error) || line.miss_count > STATS_MISS_KINDS ||
		    line.missed_site_count > STATS_MISSED_SITES)
			abort();
		for (uint32_t i = 0; i < line.miss_count; i++)
			if (!ENDED(line.miss_name[i]))
				abort();
		for (uint32_t i = 0; i < line.missed_site_count; i++) {
			const struct stats_missed_site *m = &line.missed_sites[i];
			if (m->reason_count > STATS_MISS_KINDS)
				abort();
			for (uint32_t k = 0; k < m->reason_count; k++)
				if (!ENDED(m->reason_name[k]))
					abort();
		}
	}
	free(text);
	return 0;
}
