/* Libraries opened with RTLD_DEEPBIND, bound to memplan's allocation
 * functions: see deepbind.h. The entry point, dlopen, is deepbind_entry.S. */
#define _GNU_SOURCE
#include "deepbind.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "guard.h"
#include "real_libc.h"

#define HIDDEN_USED __attribute__((visibility("hidden"), used))

/* The functions memplan interposes to allocate (libmemplan.map). */
static const char *const family[] = {
    "malloc",	     "free",	 "calloc", "realloc", "reallocarray",	    "posix_memalign",
    "aligned_alloc", "memalign", "valloc", "pvalloc", "malloc_usable_size",
};
#define FAMILY_SIZE (sizeof(family) / sizeof(family[0]))

HIDDEN_USED bool deepbind_rebinding;
HIDDEN_USED void *(*deepbind_real_dlopen)(const char *file, int mode);

#if defined(__x86_64__)

/* For each of the family, glibc's definition (what a deep binding finds) and
 * the global scope's (memplan's, or the program's own). */
static uintptr_t libc_fn[FAMILY_SIZE], global_fn[FAMILY_SIZE];

void deepbind_start(void)
{
	deepbind_rebinding = real_libc()->dlopen != NULL;
}

/* The family's addresses, looked up at the first RTLD_DEEPBIND open: made
 * at every process's start, the 22 lookups cost a replayed /bin/true 21,000
 * of its 390,000 instructions (callgrind), for the few programs that open
 * such libraries. With the guard set. */
static pthread_once_t family_once = PTHREAD_ONCE_INIT;

static void find_family(void)
{
	void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);

	/* libc stays loaded: its handle is not closed. */
	for (size_t k = 0; libc && k < FAMILY_SIZE; k++) {
		libc_fn[k] = (uintptr_t)dlsym(libc, family[k]);
		global_fn[k] = (uintptr_t)dlsym(RTLD_DEFAULT, family[k]);
	}
}

/* An object's loaded segments, from its program headers. */
struct object_layout {
	uintptr_t base;
	const char *name;
	const Elf64_Phdr *phdr;
	size_t phnum;
	bool found;
};

static int find_layout(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct object_layout *o = arg;

	(void)size;
	if (info->dlpi_addr != o->base || !info->dlpi_name || strcmp(info->dlpi_name, o->name))
		return 0;
	o->phdr = info->dlpi_phdr;
	o->phnum = info->dlpi_phnum;
	o->found = true;
	return 1;
}

/* Whether [addr, addr + bytes) lies in one segment of type type with all of
 * flags. */
static bool in_segment(const struct object_layout *o, uintptr_t addr, size_t bytes, uint32_t type,
		       uint32_t flags)
{
	for (size_t i = 0; i < o->phnum; i++) {
		const Elf64_Phdr *p = &o->phdr[i];
		uintptr_t start = o->base + p->p_vaddr;

		if (p->p_type == type && (p->p_flags & flags) == flags && addr >= start &&
		    addr - start <= p->p_memsz && bytes <= p->p_memsz - (addr - start))
			return true;
	}
	return false;
}

/* An address of the dynamic section: glibc has relocated most of them in place,
 * not all; an address below the base was not. */
static uintptr_t dynamic_address(const struct object_layout *o, uintptr_t v)
{
	return v < o->base ? v + o->base : v;
}

/* Whether the word at slot lies in the pages the loader made read-only after
 * relocation: those of PT_GNU_RELRO, its end rounded down, as glibc rounds
 * it (_dl_protect_relro). */
static bool in_relro(const struct object_layout *o, uintptr_t slot, uintptr_t page_bytes)
{
	for (size_t i = 0; i < o->phnum; i++) {
		const Elf64_Phdr *p = &o->phdr[i];
		uintptr_t start = (o->base + p->p_vaddr) & -page_bytes;
		uintptr_t end = (o->base + p->p_vaddr + p->p_memsz) & -page_bytes;

		if (p->p_type == PT_GNU_RELRO && slot >= start && slot < end)
			return true;
	}
	return false;
}

/* Writes value into the word at slot, its page made writable for the moment
 * if the loader made it read-only. */
static void write_slot(const struct object_layout *o, uintptr_t slot, uintptr_t value)
{
	uintptr_t page_bytes = (uintptr_t)sysconf(_SC_PAGESIZE), page = slot & -page_bytes;

	if (in_relro(o, slot, page_bytes)) {
		if (mprotect((void *)page, page_bytes, PROT_READ | PROT_WRITE) != 0)
			return;
		*(uintptr_t *)slot = value;
		mprotect((void *)page, page_bytes, PROT_READ);
	} else if (in_segment(o, slot, sizeof(uintptr_t), PT_LOAD, PF_W)) {
		*(uintptr_t *)slot = value;
	}
}

/* The family member that symbol sym names, or -1. */
static int family_member(const struct object_layout *o, const Elf64_Sym *symtab, const char *strtab,
			 size_t strsz, uint32_t sym)
{
	const Elf64_Sym *s = &symtab[sym];

	/* Defined in the object itself: its own, which it keeps. */
	if (!sym || !in_segment(o, (uintptr_t)s, sizeof(*s), PT_LOAD, PF_R) ||
	    s->st_shndx != SHN_UNDEF || s->st_name >= strsz)
		return -1;
	for (size_t k = 0; k < FAMILY_SIZE; k++)
		if (!strncmp(strtab + s->st_name, family[k], strsz - s->st_name) &&
		    strlen(family[k]) < strsz - s->st_name)
			return (int)k;
	return -1;
}

/* Points the object's references to the family, where they hold glibc's
 * definition (or, for a call through the PLT not yet bound, the object's own
 * stub), at the global scope's. */
static void rebind_relocations(const struct object_layout *o, const Elf64_Rela *rela, size_t count,
			       const Elf64_Sym *symtab, const char *strtab, size_t strsz)
{
	for (size_t i = 0; i < count; i++) {
		uint32_t type = ELF64_R_TYPE(rela[i].r_info);
		int k;

		if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT && type != R_X86_64_64)
			continue;
		k = family_member(o, symtab, strtab, strsz, ELF64_R_SYM(rela[i].r_info));
		if (k < 0 || !libc_fn[k] || !global_fn[k] || libc_fn[k] == global_fn[k])
			continue;
		uintptr_t slot = o->base + rela[i].r_offset;
		if (slot % sizeof(uintptr_t) ||
		    !in_segment(o, slot, sizeof(uintptr_t), PT_LOAD, PF_R))
			continue;
		uintptr_t addend = type == R_X86_64_64 ? (uintptr_t)rela[i].r_addend : 0;
		uintptr_t now = *(const uintptr_t *)slot;
		bool unbound_stub =
		    type == R_X86_64_JUMP_SLOT && in_segment(o, now, 1, PT_LOAD, PF_X);
		if (now == libc_fn[k] + addend || unbound_stub)
			write_slot(o, slot, global_fn[k] + addend);
	}
}

/* The object's relocation tables, checked to lie in it, rebound. */
static void rebind_object(const struct link_map *map)
{
	struct object_layout o = {.base = map->l_addr, .name = map->l_name};
	uintptr_t symtab = 0, strtab = 0, jmprel = 0, rela = 0;
	size_t strsz = 0, pltrelsz = 0, relasz = 0, relaent = sizeof(Elf64_Rela);
	bool plt_rela = true;

	dl_iterate_phdr(find_layout, &o);
	if (!o.found || !map->l_ld)
		return;
	for (const Elf64_Dyn *d = map->l_ld; d->d_tag != DT_NULL; d++) {
		switch (d->d_tag) {
		case DT_SYMTAB:
			symtab = dynamic_address(&o, d->d_un.d_ptr);
			break;
		case DT_STRTAB:
			strtab = dynamic_address(&o, d->d_un.d_ptr);
			break;
		case DT_STRSZ:
			strsz = d->d_un.d_val;
			break;
		case DT_JMPREL:
			jmprel = dynamic_address(&o, d->d_un.d_ptr);
			break;
		case DT_PLTRELSZ:
			pltrelsz = d->d_un.d_val;
			break;
		case DT_PLTREL:
			plt_rela = d->d_un.d_val == DT_RELA;
			break;
		case DT_RELA:
			rela = dynamic_address(&o, d->d_un.d_ptr);
			break;
		case DT_RELASZ:
			relasz = d->d_un.d_val;
			break;
		case DT_RELAENT:
			relaent = d->d_un.d_val;
			break;
		default:
			break;
		}
	}
	if (!symtab || !strtab || !in_segment(&o, strtab, strsz, PT_LOAD, PF_R) ||
	    relaent != sizeof(Elf64_Rela))
		return;
	/* The symbol table's length is not in the dynamic section: each symbol a
	 * relocation names is checked to lie in the object (family_member). */
	const Elf64_Sym *syms = (const Elf64_Sym *)symtab;
	const char *strs = (const char *)strtab;
	if (plt_rela && jmprel && in_segment(&o, jmprel, pltrelsz, PT_LOAD, PF_R))
		rebind_relocations(&o, (const Elf64_Rela *)jmprel, pltrelsz / sizeof(Elf64_Rela),
				   syms, strs, strsz);
	if (rela && in_segment(&o, rela, relasz, PT_LOAD, PF_R))
		rebind_relocations(&o, (const Elf64_Rela *)rela, relasz / sizeof(Elf64_Rela), syms,
				   strs, strsz);
}

/* Where the object at map, which asks for file by a bare name, would find it
 * along its own search path (its RPATH, LD_LIBRARY_PATH, its RUNPATH; not the
 * system's directories, which glibc searches the same for memplan), into
 * path; false if in none of them. */
static bool find_along(struct link_map *map, const char *file, char *path, size_t cap)
{
	Dl_serinfo size, *paths;
	bool found = false;

	if (dlinfo(map, RTLD_DI_SERINFOSIZE, &size) != 0 || !(paths = __libc_malloc(size.dls_size)))
		return false;
	*paths = size;
	if (dlinfo(map, RTLD_DI_SERINFOSIZE, paths) == 0 &&
	    dlinfo(map, RTLD_DI_SERINFO, paths) == 0) {
		for (unsigned i = 0; !found && i < paths->dls_cnt; i++) {
			const Dl_serpath *dir = &paths->dls_serpath[i];
			size_t dl = strlen(dir->dls_name), fl = strlen(file);

			if (dir->dls_flags & (LA_SER_CONFIG | LA_SER_DEFAULT | LA_SER_SECURE))
				break;
			if (!dl || dl + 1 + fl >= cap)
				continue;
			memcpy(path, dir->dls_name, dl);
			path[dl] = '/';
			memcpy(path + dl + 1, file, fl + 1);
			found = access(path, F_OK) == 0;
		}
	}
	__libc_free(paths);
	return found;
}

/* Reached by a jump from dlopen (deepbind_entry.S), so the return address is
 * the program's call: file is opened as that code would have it, in its
 * namespace, a bare name found along its search path first. Then the objects
 * the call loaded are rebound. */
HIDDEN_USED void *deepbind_dlopen(const char *file, int mode)
{
	const void *caller = __builtin_return_address(0);
	struct link_map *map = NULL;
	Lmid_t ns = LM_ID_BASE;
	Dl_info info;
	char path[4096];
	bool along = false;
	void *handle = NULL;

	guard_enter();
	pthread_once(&family_once, find_family);
	if (!dladdr1(caller, &info, (void **)&map, RTLD_DL_LINKMAP))
		map = NULL;
	if (map && dlinfo(map, RTLD_DI_LMID, &ns) != 0)
		ns = LM_ID_BASE;
	if (ns == LM_ID_BASE && map && file && !strchr(file, '/'))
		along = find_along(map, file, path, sizeof(path));
	(void)dlerror(); /* nothing of memplan's for the program to find */
	guard_leave();

	if (ns != LM_ID_BASE)
		handle = dlmopen(ns, file, mode);
	else if (!along || !(handle = deepbind_real_dlopen(path, mode)))
		handle = deepbind_real_dlopen(file, mode);

	/* The object and every one loaded after it in its namespace: its
	 * dependencies, and any that another thread loaded meanwhile, whose
	 * references hold the global scope's functions already and stay so. */
	guard_enter();
	if (handle && dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0)
		for (; map; map = map->l_next)
			rebind_object(map);
	guard_leave();
	return handle;
}

#else

void deepbind_start(void)
{
}

#endif

/* A dlopen before memplan resolved glibc's (another library's initialiser). */
HIDDEN_USED void *deepbind_dlopen_unresolved(const char *file, int mode)
{
	void *(*real)(const char *, int) = real_libc()->dlopen;

	return real ? real(file, mode) : NULL;
}
