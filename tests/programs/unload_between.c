/* Allocates from call sites of its own, loads PLUGIN (with UNLOAD, unloads it
 * and loads it again) and keeps it, then allocates from the same sites again.
 * Unloading a module makes replay forget every frame size it walks stacks
 * with: a replay that started without libgcc's unwinder (its plan, recorded
 * without UNLOAD, gave every size) must open it then, or the half after the
 * unload goes to libc. Prints a checksum for each half; says on stderr
 * whether libgcc_s was loaded before the unload and after it.
 * usage: unload_between PLUGIN ROUNDS [unload] */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RING 32

static int find_unwinder(struct dl_phdr_info *info, size_t size, void *found)
{
	(void)size;
	if (strstr(info->dlpi_name, "libgcc_s"))
		*(int *)found = 1;
	return 0;
}

static const char *unwinder_loaded(void)
{
	int found = 0;

	dl_iterate_phdr(find_unwinder, &found);
	return found ? "yes" : "no";
}

/* Two call sites, blocks of varying sizes, RING of them alive; a checksum. */
static __attribute__((noinline)) uint64_t allocate(unsigned rounds)
{
	char *ring[RING] = {0};
	uint64_t sum = 0;

	for (unsigned i = 0; i < rounds; i++) {
		size_t n = 24 + (i * 29) % 200;
		char *p = i % 3 ? malloc(n) : calloc(1, n);
		if (!p)
			exit(1);
		p[n - 1] = (char)i;
		sum += (unsigned char)p[n - 1] + n;
		free(ring[i % RING]);
		ring[i % RING] = p;
	}
	for (unsigned k = 0; k < RING; k++)
		free(ring[k]);
	return sum;
}

static void *load(const char *path)
{
	void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);

	if (!library) {
		fprintf(stderr, "unload_between: %s\n", dlerror());
		exit(1);
	}
	return library;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	unsigned rounds = (unsigned)atoi(argv[2]);

	printf("before: %llu\n", (unsigned long long)allocate(rounds));
	fprintf(stderr, "libgcc_s before the unload: %s\n", unwinder_loaded());
	if (argc > 3 && !strcmp(argv[3], "unload"))
		dlclose(load(argv[1]));
	void *kept = load(argv[1]);
	fprintf(stderr, "libgcc_s after the unload: %s\n", unwinder_loaded());
	printf("after: %llu\n", (unsigned long long)allocate(rounds));
	return kept ? 0 : 1;
}
