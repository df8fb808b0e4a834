/* A string grown two bytes at a time by realloc, as an interpreter appends to
 * a string (gawk's s = s "ab"): the block mostly grows in place, and moves to a
 * bigger one each time it outgrows its own. Prints the final length and a
 * checksum of the contents.
 *
 * usage: grow_string APPENDS */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	long appends = argc == 2 ? strtol(argv[1], NULL, 10) : 0;
	size_t len = 0;
	char *s = malloc(1);

	if (appends <= 0 || !s) {
		fprintf(stderr, "usage: grow_string APPENDS\n");
		return 2;
	}
	s[0] = '\0';
	for (long i = 0; i < appends; i++) {
		char *t = realloc(s, len + 3);
		if (!t) {
			fprintf(stderr, "grow_string: out of memory\n");
			return 1;
		}
		s = t;
		s[len] = (char)('a' + i % 26);
		s[len + 1] = (char)('A' + i % 26);
		s[len + 2] = '\0';
		len += 2;
	}
	unsigned long sum = 0;
	for (size_t i = 0; i < len; i++)
		sum = sum * 31 + (unsigned char)s[i];
	printf("%zu %lu\n", strlen(s), sum);
	free(s);
	return 0;
}
