/* An allocator of its own, as jemalloc or tcmalloc is to the programs linked
 * with it, that refuses any block it did not make: free, realloc and
 * malloc_usable_size of a foreign block (glibc's, say) end the process with
 * status 86 and a line on stderr. Blocks come from one mapping, never reused;
 * each has a 16-byte header in front saying its size. Thread-safe. */
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))
#define SPACE_BYTES (UINT64_C(1) << 32)
#define MAGIC UINT64_C(0x57a1c7a110c8ed01)
#define FREED UINT64_C(0x57a1c7a110c8dead)

struct header {
	uint64_t magic;
	uint64_t size;
};

static char *space;
static _Atomic uint64_t used;
static _Atomic int space_state; /* 0: none, 1: being mapped, 2: mapped */

static void die(const char *what)
{
	static const char prefix[] = "strict_alloc: ";
	(void)!write(2, prefix, sizeof(prefix) - 1);
	(void)!write(2, what, strlen(what));
	(void)!write(2, "\n", 1);
	_exit(86);
}

static char *the_space(void)
{
	int expected = 0;

	if (atomic_load(&space_state) == 2)
		return space;
	if (atomic_compare_exchange_strong(&space_state, &expected, 1)) {
		void *m = mmap(NULL, SPACE_BYTES, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (m == MAP_FAILED)
			die("cannot map its space");
		space = m;
		atomic_store(&space_state, 2);
	}
	while (atomic_load(&space_state) != 2)
		;
	return space;
}

static void *take(size_t align, size_t size)
{
	if (align < 16)
		align = 16;
	if (size > SPACE_BYTES / 2) {
		errno = ENOMEM;
		return NULL;
	}
	uint64_t need = sizeof(struct header) + align + size;
	uint64_t at = atomic_fetch_add(&used, (need + 15) & ~UINT64_C(15));
	if (at + need > SPACE_BYTES) {
		errno = ENOMEM;
		return NULL;
	}
	uintptr_t base = (uintptr_t)the_space() + at + sizeof(struct header);
	uintptr_t p = (base + align - 1) & ~(uintptr_t)(align - 1);
	struct header *h = (struct header *)p - 1;
	h->size = size;
	h->magic = MAGIC;
	return (void *)p;
}

static struct header *own(void *p, const char *call)
{
	struct header *h = (struct header *)p - 1;
	char *s = space;

	if (!s || (char *)p < s + sizeof(*h) || (char *)p >= s + SPACE_BYTES)
		die(call); /* not from this allocator */
	if (h->magic != MAGIC)
		die(h->magic == FREED ? "double free" : call);
	return h;
}

EXPORT void *malloc(size_t size)
{
	return take(16, size);
}

EXPORT void *calloc(size_t n, size_t size)
{
	size_t total;

	if (__builtin_mul_overflow(n, size, &total)) {
		errno = ENOMEM;
		return NULL;
	}
	return take(16, total); /* fresh mapped memory is zero, never reused */
}

EXPORT void free(void *p)
{
	if (p)
		own(p, "free of a block it did not make")->magic = FREED;
}

EXPORT void *realloc(void *p, size_t size)
{
	if (!p)
		return malloc(size);
	struct header *h = own(p, "realloc of a block it did not make");
	void *q = take(16, size);
	if (q) {
		memcpy(q, p, h->size < size ? h->size : size);
		h->magic = FREED;
	}
	return q;
}

EXPORT int posix_memalign(void **out, size_t align, size_t size)
{
	if (!align || align & (align - 1) || align % sizeof(void *))
		return EINVAL;
	void *p = take(align, size);
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

EXPORT void *aligned_alloc(size_t align, size_t size)
{
	return align && !(align & (align - 1)) ? take(align, size) : NULL;
}

EXPORT void *memalign(size_t align, size_t size)
{
	return aligned_alloc(align, size);
}

EXPORT void *valloc(size_t size)
{
	return take(4096, size);
}

EXPORT size_t malloc_usable_size(void *p)
{
	return p ? own(p, "malloc_usable_size of a block it did not make")->size : 0;
}
