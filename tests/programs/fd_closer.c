/* Closes every file descriptor it did not open itself halfway through its work,
 * as daemons and sandboxes do, then opens files of its own that take the freed
 * numbers, and goes on allocating. memplan's replay reads its plan through a
 * descriptor of its own; it must neither lose the plan nor read these files.
 * usage: fd_closer [ROUNDS [DIR]]; prints a checksum. With DIR, the files it
 * opens are DIR/out0 to out7, for writing, and each gets the line "data". */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static __attribute__((noinline)) char *site_record(size_t n)
{
	return malloc(n);
}

static __attribute__((noinline)) char *site_buffer(size_t n)
{
	return malloc(n);
}

static uint64_t work(unsigned rounds, uint64_t seed)
{
	char *held[16] = {0};
	uint64_t sum = 0;

	for (unsigned r = 0; r < rounds; r++) {
		seed = seed * 6364136223846793005u + 1442695040888963407u;
		size_t n = 16 + (size_t)(seed >> 33) % 400;
		unsigned k = (unsigned)(seed >> 20) % 16;
		char *p = (r & 1) ? site_record(n) : site_buffer(n);
		if (!p)
			exit(1);
		memset(p, (int)(seed & 0xff), n);
		sum += (unsigned char)p[n / 2];
		free(held[k]);
		held[k] = p;
	}
	for (unsigned k = 0; k < 16; k++)
		free(held[k]);
	return sum;
}

int main(int argc, char **argv)
{
	unsigned rounds = argc > 1 ? (unsigned)atoi(argv[1]) : 20000;
	uint64_t sum = work(rounds, 1);

	/* Everything but the standard three goes, whoever opened it. */
	long max = sysconf(_SC_OPEN_MAX);
	for (long fd = 3; fd < (max > 0 && max < 65536 ? max : 65536); fd++)
		close((int)fd);
	/* Files of its own now take the lowest numbers, the plan's old one among them. */
	int fds[8];
	for (int i = 0; i < 8; i++) {
		char path[4096];
		if (argc > 2)
			snprintf(path, sizeof(path), "%s/out%d", argv[2], i);
		fds[i] = argc > 2 ? open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644)
				  : open("/dev/zero", O_RDONLY);
		if (fds[i] < 0)
			return 1;
	}
	sum += work(rounds, 2);
	for (int i = 0; argc > 2 && i < 8; i++)
		if (write(fds[i], "data\n", 5) != 5)
			return 1;
	printf("%llu\n", (unsigned long long)sum);
	return 0;
}
