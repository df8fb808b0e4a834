/* Symbolisation with libdw, see symbolize.h. Each module is reported to one
 * offline Dwfl at its own base, once; an offset's functions come from the
 * DWARF scopes around it (inline chain, files and lines) and from the ELF
 * symbol table (the outermost function's name). */
#define _GNU_SOURCE
#include "symbolize.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "array_grow.h"
#include "file_io.h"
#include "hash_table.h"
#include "plan_file.h"

/* libstdc++'s demangler, extern "C" (cxxabi.h is C++ only). */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

/* A function of a module's ELF symbol table. */
struct elf_function {
	uint64_t start, size;
	const char *name; /* in the ELF file's string table */
	unsigned rank;	  /* among functions at one address, the lowest is named */
};

struct module_slot {
	char *path;
	uint8_t build_id[PLAN_BUILD_ID_MAX];
	unsigned build_id_bytes;
	Dwfl *dwfl;	     /* NULL if the module could not be opened */
	Dwfl_Module *module; /* NULL if not opened, or not the recorded build */
	/* The module's functions by address, read at the first lookup:
	 * dwfl_module_addrinfo scans the whole symbol table on every call, which
	 * with thousands of frames took seconds for a recording of gcc. */
	struct elf_function *functions;
	size_t function_count;
	bool functions_read;
};

struct frame_key {
	uint32_t slot;
	uint32_t pad; /* zeroed: the key is hashed as bytes */
	uint64_t offset;
};

struct cached_frame {
	struct frame_key key;
	struct frame_symbol *symbols;
	unsigned count;
	UT_hash_handle hh;
};

struct interned {
	UT_hash_handle hh;
	char text[];
};

struct symbolizer {
	struct module_slot *slots;
	size_t slot_count, slot_cap;
	struct cached_frame *frames;
	struct interned *strings;
	double deadline_s; /* CLOCK_MONOTONIC; 0: none */
};

/* Whether the ELF file open as fd has the build-id want[0..want_len). */
static bool has_build_id(int fd, const unsigned char *want, int want_len)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	const void *id;
	ssize_t n = elf ? dwelf_elf_gnu_build_id(elf, &id) : -1;
	bool same = want_len > 0 && n == want_len && !memcmp(id, want, (size_t)n);

	elf_end(elf);
	return same;
}

/* Separate debug information on this machine only: by build-id under
 * /usr/lib/debug/.build-id/, else through the file's .gnu_debuglink, next to
 * it, in its .debug/ or under /usr/lib/debug/ (where gdb looks), if the file
 * found there has the module's build-id. dwfl_standard_find_debuginfo looks in
 * the same places, then loads libdebuginfod, and with it some thirty libraries
 * (7 MiB of the resident set of a `memplan record` of jq), to ask servers,
 * which memplan never does. */
static int find_local_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
				Dwarf_Addr base, const char *file_name, const char *debuglink_file,
				GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	int fd = dwfl_build_id_find_debuginfo(mod, userdata, modname, base, file_name,
					      debuglink_file, debuglink_crc, debuginfo_file_name);
	const unsigned char *want;
	GElf_Addr vaddr;
	int want_len;

	if (fd >= 0 || !debuglink_file || !file_name || strchr(debuglink_file, '/') ||
	    (want_len = dwfl_module_build_id(mod, &want, &vaddr)) <= 0)
		return fd;
	const char *slash = strrchr(file_name, '/');
	const int dir_len = slash ? (int)(slash - file_name) : 1;
	const char *dir = slash ? file_name : ".";
	/* Before the file's directory, and between it and the link's name. */
	const char *const around[][2] = {{"", "/"}, {"", "/.debug/"}, {"/usr/lib/debug", "/"}};
	for (size_t i = 0; i < sizeof(around) / sizeof(around[0]); i++) {
		char path[PATH_MAX];
		int n = snprintf(path, sizeof(path), "%s%.*s%s%s", around[i][0], dir_len, dir,
				 around[i][1], debuglink_file);
		if (n < 0 || (size_t)n >= sizeof(path) || !strcmp(path, file_name))
			continue;
		struct stat st;
		fd = file_open_regular(path, &st);
		if (fd < 0)
			continue;
		if (has_build_id(fd, want, want_len) && (*debuginfo_file_name = strdup(path)))
			return fd;
		close(fd);
	}
	return -1;
}

static const Dwfl_Callbacks offline_callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = find_local_debuginfo,
    .section_address = dwfl_offline_section_address,
};

struct symbolizer *symbolizer_new(void)
{
	unsetenv("DEBUGINFOD_URLS");
	return calloc(1, sizeof(struct symbolizer));
}

void symbolizer_free(struct symbolizer *s)
{
	struct cached_frame *f, *f_next;
	struct interned *t, *t_next;

	if (!s)
		return;
	for (size_t i = 0; i < s->slot_count; i++) {
		if (s->slots[i].dwfl)
			dwfl_end(s->slots[i].dwfl);
		free(s->slots[i].functions);
		free(s->slots[i].path);
	}
	free(s->slots);
	HASH_ITER(hh, s->frames, f, f_next)
	{
		HASH_DEL(s->frames, f);
		free(f->symbols);
		free(f);
	}
	HASH_ITER(hh, s->strings, t, t_next)
	{
		HASH_DEL(s->strings, t);
		free(t);
	}
	free(s);
}

static double monotonic_seconds(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)now.tv_sec + (double)now.tv_nsec * 1e-9;
}

void symbolizer_set_budget(struct symbolizer *s, double seconds)
{
	s->deadline_s = monotonic_seconds() + seconds;
}

static bool past_deadline(const struct symbolizer *s)
{
	return s->deadline_s > 0 && monotonic_seconds() >= s->deadline_s;
}

/* The one copy of text (the first len bytes), or NULL on ENOMEM. */
static const char *intern(struct symbolizer *s, const char *text, size_t len)
{
	struct interned *t;

	HASH_FIND(hh, s->strings, text, len, t);
	if (t)
		return t->text;
	t = malloc(sizeof(*t) + len + 1);
	if (!t)
		return NULL;
	memcpy(t->text, text, len);
	t->text[len] = '\0';
	HASH_ADD_KEYPTR(hh, s->strings, t->text, len, t);
	return t->text;
}

/* A symbol's name as people write it: demangled (C++), without the symbol
 * version ELF tables may carry ("__libc_start_main@@GLIBC_2.34"). */
static const char *readable_name(struct symbolizer *s, const char *raw)
{
	const char *at = strchr(raw, '@');
	size_t len = at ? (size_t)(at - raw) : strlen(raw);
	const char *name;

	if (len > 2 && raw[0] == '_' && raw[1] == 'Z') {
		char *mangled = strndup(raw, len);
		int status = -1;
		char *demangled = mangled ? __cxa_demangle(mangled, NULL, NULL, &status) : NULL;
		free(mangled);
		if (demangled && status == 0) {
			name = intern(s, demangled, strlen(demangled));
			free(demangled);
			return name;
		}
		free(demangled);
	}
	return intern(s, raw, len);
}

static struct module_slot *open_module(struct symbolizer *s, const char *path,
				       const uint8_t *build_id, unsigned build_id_bytes,
				       uint32_t *index)
{
	struct module_slot *slot;

	if (build_id_bytes > sizeof(slot->build_id))
		build_id_bytes = 0;
	for (size_t i = 0; i < s->slot_count; i++) {
		slot = &s->slots[i];
		if (slot->build_id_bytes == build_id_bytes &&
		    !memcmp(slot->build_id, build_id, build_id_bytes) &&
		    !strcmp(slot->path, path)) {
			*index = (uint32_t)i;
			return slot;
		}
	}
	if (s->slot_count == s->slot_cap) {
		struct module_slot *grown = array_grow(s->slots, &s->slot_cap, sizeof(*grown), 16);
		if (!grown)
			return NULL;
		s->slots = grown;
	}
	slot = &s->slots[s->slot_count];
	memset(slot, 0, sizeof(*slot));
	slot->path = strdup(path);
	if (!slot->path)
		return NULL;
	memcpy(slot->build_id, build_id, build_id_bytes);
	slot->build_id_bytes = build_id_bytes;
	*index = (uint32_t)s->slot_count++;
	if (path[0] != '/')
		return slot; /* [vdso], [unknown] */
	slot->dwfl = dwfl_begin(&offline_callbacks);
	if (!slot->dwfl)
		return slot;
	/* The path comes from the plan: opened by libdw, a FIFO there (or a
	 * device, or a hostile plan's any path) blocked `memplan show` for good.
	 * Only a regular file is read; libdw keeps the descriptor if it takes
	 * the file. Base 0: offsets in the plan are relative to the load bias,
	 * which is what an ELF file's own addresses are. */
	struct stat st;
	int fd = file_open_regular(path, &st);
	if (fd >= 0 && !(slot->module = dwfl_report_elf(slot->dwfl, path, path, fd, 0, false)))
		close(fd);
	dwfl_report_end(slot->dwfl, NULL, NULL);
	if (slot->module && build_id_bytes) {
		const unsigned char *bits;
		GElf_Addr vaddr;
		int n = dwfl_module_build_id(slot->module, &bits, &vaddr);
		if (n != (int)build_id_bytes || memcmp(bits, build_id, build_id_bytes) != 0)
			slot->module = NULL; /* the file changed since recording */
	}
	return slot;
}

/* A DWARF function's name: its linkage name (which a C++ name needs to be
 * qualified), else its plain name, through abstract origins (an inlined
 * instance, a clone such as foo.constprop.0) and declarations. */
static const char *dwarf_function_name(struct symbolizer *s, Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));

	if (!name)
		name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr));
	if (!name)
		name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &attr));
	return name ? readable_name(s, name) : NULL;
}

/* The functions at addr from the DWARF scopes around it, innermost first, into
 * out (at most cap). The innermost one's file and line are the line table's at
 * addr; each outer one's, the call site of the function inlined into it. */
static unsigned dwarf_functions(struct symbolizer *s, Dwfl_Module *mod, Dwarf_Addr addr,
				struct frame_symbol *out, unsigned cap)
{
	Dwarf_Addr bias;
	Dwarf_Die *cu = dwfl_module_addrdie(mod, addr, &bias), *scopes = NULL, cu_die;
	Dwarf_Files *files = NULL;
	const char *file = NULL;
	unsigned count = 0;
	int line = 0, n;

	if (!cu)
		return 0;
	n = dwarf_getscopes(cu, addr - bias, &scopes);
	if (n <= 0) {
		free(scopes);
		return 0;
	}
	/* dwarf_getscopes goes on from an inlined instance to the scopes around its
	 * abstract definition; the functions it was inlined into are around the
	 * instance itself. */
	Dwarf_Die innermost = scopes[0];
	free(scopes);
	scopes = NULL;
	n = dwarf_getscopes_die(&innermost, &scopes);
	if (n <= 0) {
		free(scopes);
		return 0;
	}
	if (dwarf_diecu(&innermost, &cu_die, NULL, NULL))
		dwarf_getsrcfiles(&cu_die, &files, NULL);
	Dwfl_Line *src = dwfl_module_getsrc(mod, addr);
	if (src)
		file = dwfl_lineinfo(src, NULL, &line, NULL, NULL, NULL);
	for (int i = 0; i < n && count < cap; i++) {
		int tag = dwarf_tag(&scopes[i]);
		if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine)
			continue;
		out[count++] = (struct frame_symbol){
		    .function = dwarf_function_name(s, &scopes[i]),
		    .file = file ? intern(s, file, strlen(file)) : NULL,
		    .line = line > 0 ? (uint32_t)line : 0,
		    .inlined = tag == DW_TAG_inlined_subroutine,
		};
		if (tag == DW_TAG_subprogram)
			break;
		Dwarf_Attribute attr;
		Dwarf_Word value;
		file = NULL;
		line = 0;
		if (files &&
		    dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_file, &attr), &value) == 0)
			file = dwarf_filesrc(files, value, NULL, NULL);
		if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_line, &attr), &value) == 0)
			line = (int)value;
	}
	free(scopes);
	return count;
}

/* Which of the functions at one address names it: global before weak before
 * local, then a public name ("malloc") before an internal alias
 * ("__libc_malloc"). */
static unsigned function_rank(const GElf_Sym *sym, const char *name)
{
	unsigned binding = GELF_ST_BIND(sym->st_info);

	return (binding == STB_GLOBAL ? 0 : binding == STB_WEAK ? 2 : 4) + (name[0] == '_');
}

static int by_start_then_rank(const void *pa, const void *pb)
{
	const struct elf_function *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	return strcmp(a->name, b->name);
}

static void read_functions(struct module_slot *slot)
{
	int n = dwfl_module_getsymtab(slot->module);

	slot->functions_read = true;
	if (n <= 0 || !(slot->functions = malloc((size_t)n * sizeof(*slot->functions))))
		return;
	for (int i = 0; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		const char *name =
		    dwfl_module_getsym_info(slot->module, i, &sym, &addr, &shndx, NULL, NULL);
		unsigned type = name ? GELF_ST_TYPE(sym.st_info) : STT_NOTYPE;
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || !sym.st_size || !*name ||
		    shndx == SHN_UNDEF)
			continue;
		slot->functions[slot->function_count++] = (struct elf_function){
		    .start = addr,
		    .size = sym.st_size,
		    .name = name,
		    .rank = function_rank(&sym, name),
		};
	}
	qsort(slot->functions, slot->function_count, sizeof(*slot->functions), by_start_then_rank);
}

/* The name of the function whose code holds addr, or NULL: of the functions
 * that hold it, the one that starts last. */
static const char *elf_function_at(struct module_slot *slot, uint64_t addr)
{
	size_t lo = 0, hi;

	if (!slot->functions_read)
		read_functions(slot);
	hi = slot->function_count;
	while (lo < hi) { /* the first function starting after addr */
		size_t mid = lo + (hi - lo) / 2;
		if (slot->functions[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Back from there: functions may nest (an alias of part of another), so a
	 * few that do not hold addr may come first; those of one start come in
	 * falling rank, so the last of them that holds addr is the best named. */
	const struct elf_function *best = NULL;
	for (size_t i = lo, seen = 0; i > 0 && seen < 64; i--, seen++) {
		const struct elf_function *f = &slot->functions[i - 1];
		if (best && f->start != best->start)
			break;
		if (addr - f->start < f->size)
			best = f;
	}
	return best ? best->name : NULL;
}

static unsigned lookup(struct symbolizer *s, struct module_slot *slot, uint64_t offset,
		       struct frame_symbol *out, unsigned cap)
{
	/* A return address points after the call; look up the call itself. */
	GElf_Addr addr = offset ? offset - 1 : 0;
	unsigned count = 0;

	if (!past_deadline(s))
		count = dwarf_functions(s, slot->module, addr, out, cap);
	const char *elf_name = elf_function_at(slot, addr);
	if (!elf_name)
		return count;
	if (!count) /* no debug information, or none for this code */
		out[count++] = (struct frame_symbol){.inlined = false};
	/* The ELF symbol names the function whose code this is whether or not debug
	 * information is installed, so plans recorded with and without it agree. */
	if (!out[count - 1].inlined)
		out[count - 1].function = readable_name(s, elf_name);
	return count;
}

void symbolizer_warm(struct symbolizer *s, const char *path)
{
	static const uint8_t none[1];
	const unsigned char *bits;
	uint32_t index;
	GElf_Addr vaddr, bias;
	struct module_slot *slot = open_module(s, path, none, 0, &index);

	if (!slot || !slot->module || slot->build_id_bytes)
		return; /* not there, or opened already by a lookup */
	int n = dwfl_module_build_id(slot->module, &bits, &vaddr);
	if (n > 0 && (size_t)n <= sizeof(slot->build_id)) {
		memcpy(slot->build_id, bits, (size_t)n);
		slot->build_id_bytes = (unsigned)n;
	}
	dwfl_module_getdwarf(slot->module, &bias);
	if (!slot->functions_read)
		read_functions(slot);
}

unsigned symbolizer_lookup(struct symbolizer *s, const char *path, const uint8_t *build_id,
			   unsigned build_id_bytes, uint64_t offset,
			   const struct frame_symbol **out)
{
	struct frame_symbol found[FRAME_SYMBOLS_MAX];
	struct cached_frame *f;
	struct frame_key key = {0};
	struct module_slot *slot = open_module(s, path, build_id, build_id_bytes, &key.slot);

	*out = NULL;
	if (!slot || !slot->module)
		return 0;
	key.offset = offset;
	HASH_FIND(hh, s->frames, &key, sizeof(key), f);
	if (!f) {
		unsigned count = lookup(s, slot, offset, found, FRAME_SYMBOLS_MAX);
		f = calloc(1, sizeof(*f));
		if (!f)
			return 0;
		f->key = key;
		f->count = count;
		f->symbols = count ? malloc(count * sizeof(*f->symbols)) : NULL;
		if (count && !f->symbols) {
			free(f);
			return 0;
		}
		if (count)
			memcpy(f->symbols, found, count * sizeof(*f->symbols));
		HASH_ADD(hh, s->frames, key, sizeof(key), f);
	}
	*out = f->symbols;
	return f->count;
}
