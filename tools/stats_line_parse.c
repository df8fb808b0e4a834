/* A statistics line read back, see stats_lines.h: a small parser for the flat
 * objects json_line.c writes: strings, numbers, booleans, and nested objects
 * (the misses by reason; the missed sites, each an object of misses by
 * reason). It reads files other processes wrote (`memplan check --stats`
 * takes any), so no input leads it past the line's end, or into a recursion
 * deeper than STATS_DEPTH_MAX (tests/fuzz/fuzz-stats-line.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats_lines.h"

struct cursor {
	const char *p;
	bool bad;
	unsigned depth; /* objects open: at most STATS_DEPTH_MAX */
};

/* memplan writes three levels: the line, its missed sites, a site's misses
 * by reason. Deeper objects are passed over, up to this depth; a line nested
 * deeper still is refused: read on, it took a level of the C stack per level
 * of nesting, and 100,000 of them overflowed it. */
#define STATS_DEPTH_MAX 16u

static void skip_space(struct cursor *c)
{
	while (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r')
		c->p++;
}

static bool take(struct cursor *c, char ch)
{
	skip_space(c);
	if (*c->p != ch)
		return false;
	c->p++;
	return true;
}

/* A JSON string into out (cut to cap - 1 bytes). A \u escape up to \u00ff
 * gives that byte back: the preload library writes a byte that is not valid
 * UTF-8 so (json_line.c); one beyond becomes '?'. */
static void string(struct cursor *c, char *out, size_t cap)
{
	size_t n = 0;

	if (!take(c, '"')) {
		c->bad = true;
		return;
	}
	while (*c->p && *c->p != '"') {
		char ch = *c->p++;
		if (ch == '\\') {
			/* A line cut after a backslash: the cursor stays on the
			 * terminator, which no later read passes. */
			if (!*c->p) {
				c->bad = true;
				return;
			}
			ch = *c->p++;
			switch (ch) {
			case 'n':
				ch = '\n';
				break;
			case 't':
				ch = '\t';
				break;
			case 'r':
				ch = '\r';
				break;
			case 'b':
				ch = '\b';
				break;
			case 'f':
				ch = '\f';
				break;
			case 'u': {
				char hex[5] = {0};
				for (int i = 0; i < 4 && *c->p; i++)
					hex[i] = *c->p++;
				unsigned long v = strtoul(hex, NULL, 16);
				ch = v < 0x100 ? (char)v : '?';
				break;
			}
			default: /* \" \\ \/ */
				break;
			}
		}
		if (n + 1 < cap)
			out[n++] = ch;
	}
	if (cap)
		out[n] = '\0';
	if (!take(c, '"'))
		c->bad = true;
}

/* One value for key (prefix.key inside a nested object). */
static void value(struct cursor *c, const char *prefix, const char *key, struct stats_line *out);

static void object(struct cursor *c, const char *prefix, struct stats_line *out)
{
	char key[64];

	if (c->depth == STATS_DEPTH_MAX || !take(c, '{')) {
		c->bad = true;
		return;
	}
	if (take(c, '}'))
		return;
	c->depth++;
	do {
		string(c, key, sizeof(key));
		if (c->bad || !take(c, ':')) {
			c->bad = true;
			return;
		}
		value(c, prefix, key, out);
	} while (!c->bad && take(c, ','));
	if (c->bad || !take(c, '}'))
		c->bad = true;
	c->depth--;
}

/* The prefix of a missed site's own object: the numbers in it are the misses
 * of the site opened last (missed_site_begin), by reason, summed. */
static const char missed_site_prefix[] = "missed_sites/";

/* A site of "missed_sites", keyed by its plan key in hex, opening. Returns
 * false for a key that is no such key, or past STATS_MISSED_SITES (its
 * counts are then not kept). */
static bool missed_site_begin(const char *key, struct stats_line *out)
{
	const size_t len = strlen(key);

	if (!len || len > 16 || strspn(key, "0123456789abcdefABCDEF") != len ||
	    out->missed_site_count == STATS_MISSED_SITES)
		return false;
	struct stats_missed_site *site = &out->missed_sites[out->missed_site_count++];
	memset(site, 0, sizeof(*site));
	site->key = strtoull(key, NULL, 16);
	return true;
}

/* A count of misses by reason into names and counts, of which *count are
 * taken: a reason past STATS_MISS_KINDS is not kept. */
static void add_reason(char (*names)[24], uint64_t *counts, uint32_t *count, const char *key,
		       uint64_t v)
{
	if (*count < STATS_MISS_KINDS) {
		snprintf(names[*count], sizeof(names[0]), "%s", key);
		counts[(*count)++] = v;
	}
}

static void number(struct cursor *c, const char *prefix, const char *key, struct stats_line *out)
{
	char *end;

	/* Digits only: strtoull takes a sign (and "-5" as 2^64 - 5), and wraps
	 * past 2^64 to its largest. memplan writes neither. */
	if (*c->p < '0' || *c->p > '9') {
		c->bad = true;
		return;
	}
	errno = 0;
	unsigned long long v = strtoull(c->p, &end, 10);
	if (errno) {
		c->bad = true;
		return;
	}
	c->p = end;
	/* By address: a key of the line spelt the same is no missed site. */
	if (prefix == missed_site_prefix) {
		struct stats_missed_site *site = &out->missed_sites[out->missed_site_count - 1];
		site->misses += v;
		add_reason(site->reason_name, site->by_reason, &site->reason_count, key, v);
		return;
	}
	if (prefix && !strcmp(prefix, "misses")) {
		add_reason(out->miss_name, out->miss, &out->miss_count, key, v);
		return;
	}
	if (prefix)
		return;
	if (!strcmp(key, "pid"))
		out->pid = v;
	else if (!strcmp(key, "allocs"))
		out->allocs = v;
	else if (!strcmp(key, "planned"))
		out->planned = v;
	else if (!strcmp(key, "hits"))
		out->hits = v;
	else if (!strcmp(key, "hit_bytes"))
		out->hit_bytes = v;
	else if (!strcmp(key, "arena_bytes"))
		out->arena_bytes = v;
}

static void value(struct cursor *c, const char *prefix, const char *key, struct stats_line *out)
{
	char ignored[8];

	skip_space(c);
	if (*c->p == '{') {
		/* A missed site's object counts only if its key was taken. */
		if (prefix && !strcmp(prefix, "missed_sites"))
			object(c, missed_site_begin(key, out) ? missed_site_prefix : "", out);
		else
			object(c, key, out);
	} else if (*c->p == '"') {
		if (prefix)
			string(c, ignored, sizeof(ignored));
		else if (!strcmp(key, "exe"))
			string(c, out->exe, sizeof(out->exe));
		else if (!strcmp(key, "plan"))
			string(c, out->plan, sizeof(out->plan));
		else if (!strcmp(key, "argv0"))
			string(c, out->argv0, sizeof(out->argv0));
		else if (!strcmp(key, "error"))
			string(c, out->error, sizeof(out->error));
		else if (!strcmp(key, "match"))
			string(c, out->match, sizeof(out->match));
		else
			string(c, ignored, sizeof(ignored));
	} else if (!strncmp(c->p, "true", 4) || !strncmp(c->p, "false", 5)) {
		bool v = *c->p == 't';
		c->p += v ? 4 : 5;
		if (!prefix && !strcmp(key, "exe_in_plan"))
			out->exe_in_plan = v;
		if (!prefix && !strcmp(key, "written")) {
			out->has_written = true;
			out->written = v;
		}
		if (!prefix && !strcmp(key, "said"))
			out->said = v;
		if (!prefix && !strcmp(key, "sandboxed"))
			out->sandboxed = v;
		if (!prefix && !strcmp(key, "plan_unreadable"))
			out->plan_unreadable = v;
	} else {
		number(c, prefix, key, out);
	}
}

/* The whole of text as one object. */
static bool parse_object(const char *text, struct stats_line *out)
{
	struct cursor c = {.p = text};

	memset(out, 0, sizeof(*out));
	object(&c, NULL, out);
	/* A process serves no more calls than it makes. */
	if (c.bad || out->hits > out->allocs)
		return false;
	skip_space(&c);
	return !*c.p;
}

/* How every line the preload library writes opens (json_line.c). A quote in
 * one of its strings is escaped, so within a line these bytes open it and
 * nothing else. */
static const char line_opening[] = "{\"exe\":\"";

bool stats_line_parse(const char *text, struct stats_line *out)
{
	const char *last = NULL;

	if (parse_object(text, out))
		return true;
	if (!*text)
		return false;
	/* A line after a command's output that did not end with a newline
	 * (replay --stats -, then `printf abc`) is glued to its last bytes:
	 * abc{"exe":...}. Read from the line's last opening, and only as a
	 * whole object to the end of the line. */
	for (const char *p = strstr(text + 1, line_opening); p; p = strstr(p + 1, line_opening))
		last = p;
	return last && parse_object(last, out);
}
