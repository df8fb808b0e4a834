/* How a call site is named in one line (site_identity_name): whole, or cut
 * with "..." on a whole UTF-8 character when it does not fit, never in the
 * middle of a name that would then read as a whole one (a C++ template's,
 * say), with control characters escaped, and in Markdown shown as it is.
 * Exits 1 on a failed check. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "site_identity.h"

static void check(int ok, const char *what, const char *got)
{
	if (!ok) {
		fprintf(stderr, "%s: got \"%s\"\n", what, got);
		exit(1);
	}
}

static int ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), m = strlen(tail);
	return n >= m && !memcmp(s + n - m, tail, m);
}

/* Whether s is well-formed UTF-8 (no sequence cut short). */
static int whole_utf8(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		int more = *p < 0x80 ? 0 : (*p & 0xe0) == 0xc0 ? 1 : (*p & 0xf0) == 0xe0 ? 2 : 3;
		p++;
		for (; more; more--, p++)
			if ((*p & 0xc0) != 0x80)
				return 0;
	}
	return 1;
}

int main(void)
{
	struct site_function fn[] = {
	    {.module = "libstdc++.so.6", .function = "operator new(unsigned long)"},
	    {.module = "cmake",
	     .function = "std::__cxx11::basic_string<char, std::char_traits<char>, "
			 "std::allocator<char> >::_M_mutate(unsigned long, unsigned long, "
			 "char const*, unsigned long)"},
	    {.module = "cmake", .function = "main"},
	};
	struct site_identity id = {.functions = fn, .count = 3};
	char out[400], again[400], small[90];

	site_identity_name(&id, false, out, sizeof(out));
	check(!strcmp(out, "operator new(unsigned long) (libstdc++.so.6) <- "
			   "std::__cxx11::basic_string<char, std::char_traits<char>, "
			   "std::allocator<char> >::_M_mutate(unsigned long, unsigned long, char "
			   "const*, unsigned long) <- main (cmake)"),
	      "whole", out);
	site_identity_name(&id, false, small, sizeof(small));
	check(strlen(small) == sizeof(small) - 1 && ends_with(small, "...") &&
		  !strncmp(small, out, sizeof(small) - 4),
	      "cut", small);
	/* The markdown form's arrows are three bytes: a cut never splits one. */
	for (size_t cap = 60; cap < 90; cap++) {
		site_identity_name(&id, true, small, cap);
		check(ends_with(small, "...") && whole_utf8(small) && strlen(small) < cap,
		      "markdown cut", small);
	}
	/* Exactly as long as the room: whole, no mark. */
	site_identity_name(&id, false, again, strlen(out) + 1);
	check(!strcmp(again, out), "exact fit", again);
	/* Names from a hostile plan: control characters, C1's in UTF-8 too, are
	 * escaped (no escape sequence reaches the terminal, nothing splits the
	 * line); in markdown, a '|' is the table cell's "\|", a name with a
	 * backtick is a code span between two, and markup outside one is escaped. */
	struct site_function odd[] = {
	    {.module = "a\nb",
	     .function = "f\x1b]0;title\x07g\xc2\x9b"
			 "2J"},
	    {.module = "m|`", .function = "h\ti|j`k\x7f"},
	};
	struct site_identity odd_id = {.functions = odd, .count = 2};
	site_identity_name(&odd_id, false, out, sizeof(out));
	check(!strcmp(out, "f\\x1b]0;title\\x07g\\x9b2J (a\\nb) <- h\\ti|j`k\\x7f (m|`)"),
	      "escaped", out);
	site_identity_name(&odd_id, true, out, sizeof(out));
	check(!strcmp(out, "`f\\x1b]0;title\\x07g\\x9b2J` (a\\nb) ← `` h\\ti\\|j`k\\x7f `` "
			   "(m\\|\\`)"),
	      "escaped markdown", out);
	/* C++ operators, a run of backticks, markup in a module's name: shown as
	 * they are once GitHub renders them. */
	struct site_function ops[] = {
	    {.module = "*lib_a_.so*", .function = "operator|(S, int)"},
	    {.module = "app", .function = "f``g"},
	    {.module = "app", .function = "operator||(S, S)"},
	};
	struct site_identity ops_id = {.functions = ops, .count = 3};
	site_identity_name(&ops_id, true, out, sizeof(out));
	check(!strcmp(out, "`operator\\|(S, int)` (\\*lib_a\\_.so\\*) ← ``` f``g ``` ← "
			   "`operator\\|\\|(S, S)` (app)"),
	      "markdown operators", out);
	return 0;
}
