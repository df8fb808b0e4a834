/* Prints, for alignments that are no power of two (and 0), whether
 * aligned_alloc(A, 100) gave memory, and its errno if not: memplan must answer
 * as the libc under it does (glibc 2.36 gives memory; later versions refuse
 * with EINVAL). Also a few valid alignments, each block written and freed. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static __attribute__((noinline)) void *get(size_t align, size_t size)
{
	void *p = aligned_alloc(align, size);
	asm volatile("" ::: "memory");
	return p;
}

int main(void)
{
	static const size_t aligns[] = {0, 3, 24, 48, 8, 64, 4096};

	for (int round = 0; round < 3; round++)
		for (size_t i = 0; i < sizeof(aligns) / sizeof(aligns[0]); i++) {
			errno = 0;
			void *p = get(aligns[i], 100);
			int err = errno;
			if (p) {
				memset(p, 0x5a, 100);
				int misaligned = aligns[i] && !(aligns[i] & (aligns[i] - 1)) &&
						 (uintptr_t)p % aligns[i];
				printf("aligned_alloc(%zu, 100): memory%s\n", aligns[i],
				       misaligned ? " MISALIGNED" : "");
				free(p);
			} else {
				printf("aligned_alloc(%zu, 100): NULL, %s\n", aligns[i], strerror(err));
			}
		}
	return 0;
}
