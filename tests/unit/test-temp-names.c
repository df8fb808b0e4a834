/* temp_names: the names gcc, mkstemp and Python give temporary files are seen
 * through, and nothing else is: the argument's other characters, short runs,
 * paths outside the temporary directories, and where an argument ends. */
#include <string.h>

#include "check.h"
#include "temp_names.h"

static void normalised(const char *arg, size_t len, const char *tmpdir, const char *want)
{
	struct temp_names_reader r;
	char out[256];
	size_t o = 0;
	int c;

	temp_names_begin(&r, arg, len, tmpdir);
	while ((c = temp_names_next(&r)) >= 0 && o + 1 < sizeof(out))
		out[o++] = (char)c;
	out[o] = '\0';
	if (strcmp(out, want)) {
		fprintf(stderr, "'%s' read as '%s', not '%s'\n", arg, out, want);
		CHECK(!"normalised as expected");
	}
}

static bool same(const char *a, const char *b)
{
	return temp_names_same(a, strlen(a), b, strlen(b), NULL);
}

int main(void)
{
	normalised("/tmp/ccAbC123.s", 99, NULL, "/tmp/*.s");
	normalised("-MF/tmp/ccX9y8z7.d", 99, NULL, "-MF/tmp/*.d");
	normalised("--output=/var/tmp/tmpa1b2c3d4,/dev/shm/sem.QwErTy", 99, NULL,
		   "--output=/var/tmp/*,/dev/shm/sem.*");
	normalised("/tmp/cc1/abc.s", 99, NULL, "/tmp/cc1/abc.s"); /* runs under six stay */
	normalised("/home/user/ccAbC123.s", 99, NULL, "/home/user/ccAbC123.s");
	normalised("x/tmp/ccAbC123.s", 99, NULL, "x/tmp/ccAbC123.s"); /* no path starts there */
	normalised("/tmp/ccAbC123.s other", 99, NULL, "/tmp/*.s other");
	/* $TMPDIR's own long names are kept, those under it replaced. */
	normalised("/scratch/build_area/ccAbC123.o", 99, "/scratch/build_area/",
		   "/scratch/build_area/*.o");
	normalised("/scratch/build_area/ccAbC123.o", 99, "relative",
		   "/scratch/build_area/ccAbC123.o");
	/* Cut short by its length, or by a NUL before it. */
	normalised("/tmp/ccAbC123.s", 8, NULL, "/tmp/ccA");
	normalised("/tmp/ccAbC123.s", 11, NULL, "/tmp/*");
	normalised("/tmp/ab\0cdefgh", 99, NULL, "/tmp/ab");

	CHECK(same("/tmp/ccAbC123.s", "/tmp/ccZzZ999.s"));
	CHECK(same("-o/tmp/ccAbC123.o", "-o/tmp/ccq1w2e3.o"));
	CHECK(same("plain", "plain"));
	CHECK(same("", ""));
	CHECK(!same("/tmp/ccAbC123.s", "/tmp/ccZzZ999.o"));
	CHECK(!same("hello.c", "other.c"));
	CHECK(!same("/tmp/ccAbC123.s", "/tmp/ccAbC123.sx"));
	CHECK(!same("ab", "abc"));
	CHECK(!same("abc", "ab"));
	CHECK(!same("/home/ccAbC123.s", "/home/ccZzZ999.s"));
	puts("temp names: ok");
	return 0;
}
