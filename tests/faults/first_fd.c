/* Allocates a little, then prints the descriptor open() returns: the lowest
 * free one, which memplan must leave where the plain run has it. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
	void *blocks[64];

	for (int i = 0; i < 64; i++) {
		blocks[i] = malloc(32 + (size_t)i * 24);
		if (!blocks[i])
			return 2;
		memset(blocks[i], i, 32 + (size_t)i * 24);
	}
	int fd = open("/dev/null", O_RDONLY);
	printf("%d\n", fd);
	for (int i = 0; i < 64; i++)
		free(blocks[i]);
	return 0;
}
