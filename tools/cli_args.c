/* Option arguments, see cli_args.h. */
#include "cli_args.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decimal_text.h"

int cli_getopt(int argc, char **argv, const char *shortopts, const struct option *longopts)
{
	int index = -1;

	optarg = NULL;
	int c = getopt_long(argc, argv, shortopts, longopts, &index);
	if (c == -1 || c == '?' || !optarg || strcmp(optarg, "--") != 0)
		return c;
	if (index >= 0)
		fprintf(stderr, "%s: option '--%s' needs a value, not '--'\n", argv[0],
			longopts[index].name);
	else
		fprintf(stderr, "%s: option '-%c' needs a value, not '--'\n", argv[0], c);
	return '?';
}

int cli_parse_count(const char *text, uint64_t *out)
{
	char *end;

	if (!text || *text < '0' || *text > '9')
		return -EINVAL;
	errno = 0;
	unsigned long long v = strtoull(text, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

int cli_parse_top(const char *text, uint32_t *out)
{
	uint64_t v;

	if (!strcmp(text, "all")) {
		*out = UINT32_MAX;
		return 0;
	}
	if (cli_parse_count(text, &v) < 0 || v >= UINT32_MAX)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

int cli_parse_decimal(const char *text, double *out)
{
	return decimal_text_parse(text, out) ? 0 : -EINVAL;
}

int cli_parse_percent(const char *text, double *out)
{
	return cli_parse_decimal(text, out);
}

const char *cli_stray_word(int argc, char **argv, int optind)
{
	if (optind + 1 < argc && strcmp(argv[optind + 1], "--") == 0 && argv[optind][0] != '-')
		return argv[optind];
	return NULL;
}
