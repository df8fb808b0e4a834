/* A program that bounds itself: it lowers its address-space limit (RLIMIT_AS)
 * to what it maps already, before its first allocation, then makes COUNT
 * blocks of SIZE bytes (at most 64) and frees them, and prints how many it
 * got. With no room left for a new mapping, only
 * memory reserved before the limit can serve them: under replay, the arena.
 * (Replay used to map its call-site caches and its first windows at the first
 * allocation, found no room for them, and served nothing.)
 *
 * usage: own_limit COUNT SIZE [free]: "free" leaves the limit alone. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* The process's mapped bytes now, from /proc/self/statm (in pages), read
 * without stdio, which would allocate. */
static size_t mapped_bytes(void)
{
	char text[64] = "";
	int fd = open("/proc/self/statm", O_RDONLY);

	if (fd < 0 || read(fd, text, sizeof(text) - 1) <= 0)
		text[0] = '\0';
	if (fd >= 0)
		close(fd);
	return strtoul(text, NULL, 10) * 4096;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	int count = atoi(argv[1]);
	size_t size = (size_t)atol(argv[2]);
	void *blocks[64];
	int got = 0;

	if (count < 0 || count > 64)
		return 2;
	if (argc < 4 || strcmp(argv[3], "free")) {
		size_t now = mapped_bytes();
		struct rlimit r = {now, now};
		if (!now || setrlimit(RLIMIT_AS, &r) != 0)
			return 1;
	}
	for (int i = 0; i < count; i++)
		if ((blocks[i] = malloc(size))) {
			memset(blocks[i], i, size);
			got++;
		}
	for (int i = 0; i < count; i++)
		free(blocks[i]);
	printf("%d of %d blocks\n", got, count);
	return 0;
}
