/* Loads the library PLUGIN with dlopen, allocates through it, unloads it, and
 * does so LOADS times, with an address range taken in between so that each load
 * lands elsewhere. A call site in the library is its module and offset, so every
 * load has the same sites: record and replay must match all of them, which needs
 * memplan's table of modules to follow dlopen and dlclose. Then it loads PLUGIN
 * once more, unloads it, and loads OTHER, which the loader puts where PLUGIN
 * was: OTHER's call site, at addresses that were PLUGIN's a moment ago, must be
 * OTHER's. Prints a checksum per load, in how many loads PLUGIN moved, and
 * whether OTHER took its place; exits 1 if it cannot load them.
 * usage: plugin_host PLUGIN OTHER LOADS */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#define RING 64

/* Calls alloc count times, keeping the last RING blocks; their checksum. */
static uint64_t allocate_through(char *(*alloc)(size_t), unsigned count)
{
	char *ring[RING] = {0};
	uint64_t sum = 0;

	for (unsigned i = 0; i < count; i++) {
		size_t n = 16 + (i * 37) % 300;
		char *p = alloc(n);
		if (!p)
			exit(1);
		sum += (unsigned char)p[n - 1] + n;
		free(ring[i % RING]);
		ring[i % RING] = p;
	}
	for (unsigned k = 0; k < RING; k++)
		free(ring[k]);
	return sum;
}

/* dlopen and dlsym, or exit 1. */
static void *load(const char *path, const char *symbol, void **library)
{
	void *f;

	*library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	f = *library ? dlsym(*library, symbol) : NULL;
	if (!f) {
		fprintf(stderr, "plugin_host: %s\n", dlerror());
		exit(1);
	}
	return f;
}

/* Where the library that holds f begins. */
static void *base_of(void *f)
{
	Dl_info where;

	return dladdr(f, &where) ? where.dli_fbase : NULL;
}

int main(int argc, char **argv)
{
	int loads = argc > 3 ? atoi(argv[3]) : 3;
	void *library, *first_base = NULL;
	int moved = 0;

	if (argc < 3)
		return 2;
	for (int i = 0; i < loads; i++) {
		char *(*plugin_alloc)(size_t) = load(argv[1], "plugin_alloc", &library);
		void *base = base_of((void *)plugin_alloc);
		if (!i)
			first_base = base;
		else
			moved += base != first_base;
		printf("load %d: checksum %llu\n", i,
		       (unsigned long long)allocate_through(plugin_alloc, 3000));
		dlclose(library);
		/* The first page where the library began, taken and never given back:
		 * the next load cannot start there. */
		if (base)
			mmap(base, 4096, PROT_NONE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	}
	printf("moved in %d of %d loads\n", moved, loads - 1);

	char *(*plugin_alloc)(size_t) = load(argv[1], "plugin_alloc", &library);
	void *plugin_base = base_of((void *)plugin_alloc);
	printf("last load: checksum %llu\n", (unsigned long long)allocate_through(plugin_alloc, 1000));
	dlclose(library);
	char *(*other_alloc)(size_t) = load(argv[2], "other_alloc", &library);
	printf("other: checksum %llu\n", (unsigned long long)allocate_through(other_alloc, 2000));
	printf("other took the plugin's place: %s\n",
	       base_of((void *)other_alloc) == plugin_base ? "yes" : "no");
	return 0;
}
