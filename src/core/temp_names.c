/* Temporary names in arguments, see temp_names.h. */
#include "temp_names.h"

#include <string.h>

/* Runs shorter than this stay: "tmp", "cc1", a version number. mkstemp's
 * XXXXXX is the shortest random part in use. */
#define RANDOM_RUN_MIN 6

static bool is_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

/* Whether the len bytes at s begin with the NUL-terminated prefix p. */
static bool starts_with(const char *s, size_t len, const char *p, size_t p_len)
{
	return p_len <= len && !memcmp(s, p, p_len);
}

/* The length of the temporary directory's prefix ("/tmp/", $TMPDIR/) at the
 * len bytes at s, or 0. */
static size_t temp_prefix(const char *s, size_t len, const char *tmpdir)
{
	static const char *const dirs[] = {"/tmp/", "/var/tmp/", "/dev/shm/"};

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (starts_with(s, len, dirs[i], strlen(dirs[i])))
			return strlen(dirs[i]);
	if (tmpdir && tmpdir[0] == '/') {
		size_t n = strlen(tmpdir);
		while (n > 1 && tmpdir[n - 1] == '/')
			n--;
		if (n > 1 && n < len && starts_with(s, len, tmpdir, n) && s[n] == '/')
			return n + 1;
	}
	return 0;
}

/* Whether a path may start at arg[i]: at the start, after '=', ',' or ':'
 * (--output=/tmp/x), or after an option's name (-MF/tmp/x). */
static bool path_may_start(const char *arg, size_t i)
{
	if (i == 0 || strchr("=,:", arg[i - 1]))
		return true;
	return arg[0] == '-' && !memchr(arg, '/', i);
}

void temp_names_begin(struct temp_names_reader *r, const char *arg, size_t len, const char *tmpdir)
{
	*r = (struct temp_names_reader){.arg = arg, .len = strnlen(arg, len), .tmpdir = tmpdir};
}

int temp_names_next(struct temp_names_reader *r)
{
	const char *arg = r->arg;

	if (r->at >= r->len)
		return -1;
	if (r->at < r->verbatim_end || r->run_left) {
		if (r->run_left)
			r->run_left--;
		return (unsigned char)arg[r->at++];
	}
	if (!r->in_temp && path_may_start(arg, r->at)) {
		size_t prefix = temp_prefix(arg + r->at, r->len - r->at, r->tmpdir);
		if (prefix) {
			r->in_temp = true;
			r->verbatim_end = r->at + prefix;
			return (unsigned char)arg[r->at++];
		}
	}
	if (r->in_temp && strchr(",:= ", arg[r->at]))
		r->in_temp = false; /* the path ends */
	size_t run = 0;
	while (r->in_temp && r->at + run < r->len && is_name_char(arg[r->at + run]))
		run++;
	if (run >= RANDOM_RUN_MIN) {
		r->at += run;
		return '*';
	}
	if (run)
		r->run_left = run - 1;
	return (unsigned char)arg[r->at++];
}

bool temp_names_same(const char *a, size_t a_len, const char *b, size_t b_len, const char *tmpdir)
{
	struct temp_names_reader x, y;
	int c, d;

	temp_names_begin(&x, a, a_len, tmpdir);
	temp_names_begin(&y, b, b_len, tmpdir);
	do {
		c = temp_names_next(&x);
		d = temp_names_next(&y);
	} while (c == d && c >= 0);
	return c == d;
}
