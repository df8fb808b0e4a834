/* Whether a big block's pages leave the resident set once it is freed, as
 * glibc's do (it maps blocks of 32 MiB and more on their own, and unmaps them
 * on free): writes a block of MIB MiB, frees it, and prints whether the
 * resident set fell by at least three quarters of it.
 * usage: give_back MIB */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static long resident_bytes(void)
{
	long pages = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (!f || fscanf(f, "%ld %ld", &pages, &resident) != 2)
		exit(1);
	fclose(f);
	return resident * sysconf(_SC_PAGESIZE);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: give_back MIB\n");
		return 2;
	}
	size_t bytes = (size_t)atol(argv[1]) << 20;
	char *p = malloc(bytes);

	if (!p)
		return 1;
	memset(p, 7, bytes);
	__asm__ volatile("" : : "r"(p) : "memory"); /* the writes stay */
	long held = resident_bytes();
	free(p);
	long after = resident_bytes();
	printf("pages given back: %s\n", held - after >= (long)(bytes / 4 * 3) ? "yes" : "no");
	return 0;
}
