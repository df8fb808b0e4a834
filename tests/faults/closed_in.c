/* Allocates, then does to its descriptors what a sandboxed or a careful
 * program does, and allocates again:
 *   nofile   lowers RLIMIT_NOFILE to its lowest free descriptor, so that no
 *            file can be opened any more (as a sandbox that forbids open());
 *   clobber  puts a file of its own, OUT, under every descriptor above 2 it
 *            finds open (memplan's among them), and writes to it.
 *   open     neither (a recording of it serves the others: a recording of
 *            nofile could not write its plan).
 * Prints a checksum; exits 1 if an allocation fails.
 * usage: closed_in nofile|clobber|open [OUT] */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static unsigned long allocate(int rounds)
{
	unsigned long sum = 0;

	for (int i = 0; i < rounds; i++) {
		char *p = malloc(16 + (size_t)(i * 13) % 200);
		if (!p)
			exit(1);
		memset(p, i, 16);
		sum += (unsigned char)p[15];
		free(p);
	}
	return sum;
}

int main(int argc, char **argv)
{
	unsigned long sum = allocate(500);

	if (argc > 1 && !strcmp(argv[1], "nofile")) {
		int lowest_free = 0;
		while (fcntl(lowest_free, F_GETFD) >= 0)
			lowest_free++;
		/* Every new descriptor would be at least lowest_free. */
		struct rlimit r = {.rlim_cur = (rlim_t)lowest_free,
				   .rlim_max = (rlim_t)lowest_free};
		if (setrlimit(RLIMIT_NOFILE, &r) != 0)
			return 1;
		if (open("/dev/null", O_RDONLY) >= 0)
			return 1; /* the limit does not hold: nothing is tested */
	} else if (argc > 2 && !strcmp(argv[1], "clobber")) {
		int own = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (own < 0)
			return 1;
		for (int fd = 3; fd < 4096; fd++)
			if (fd != own && fcntl(fd, F_GETFD) >= 0)
				dup2(own, fd);
		if (write(own, "the program's own\n", 18) != 18)
			return 1;
	} else if (argc < 2 || strcmp(argv[1], "open")) {
		return 2;
	}
	sum += allocate(500);
	printf("%lu\n", sum);
	return 0;
}
