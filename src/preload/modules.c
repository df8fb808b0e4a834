/* The module table, see modules.h. */
#define _GNU_SOURCE
#include "modules.h"

#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hash64.h"

struct scan {
	struct module *modules;
	size_t count, cap;
	unsigned long long adds, subs;
	int err;
};

static size_t note_align(size_t v)
{
	return (v + 3) & ~(size_t)3;
}

/* Copies the GNU build-id from the module's PT_NOTE segments, if it has one. */
static void read_build_id(struct dl_phdr_info *info, struct module *m)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_NOTE)
			continue;
		const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr);
		const char *end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const void *)p;
			const char *name = p + sizeof(*nh);
			const char *desc = name + note_align(nh->n_namesz);
			if (desc + nh->n_descsz > end)
				break;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    memcmp(name, "GNU", 4) == 0 && nh->n_descsz &&
			    nh->n_descsz <= PLAN_BUILD_ID_MAX) {
				m->build_id_bytes = (uint8_t)nh->n_descsz;
				memcpy(m->build_id, desc, nh->n_descsz);
				return;
			}
			p = desc + note_align(nh->n_descsz);
		}
	}
}

static char *main_program_path(void)
{
	char buf[4096];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);

	if (n <= 0)
		return strdup("[main]");
	buf[n] = '\0';
	return strdup(buf);
}

static int add_module(struct dl_phdr_info *info, size_t size, void *ctx)
{
	struct scan *scan = ctx;
	struct module m = {0};
	uintptr_t lo = UINTPTR_MAX, hi = 0;

	scan->adds = info->dlpi_adds;
	scan->subs = info->dlpi_subs;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t s = info->dlpi_addr + ph->p_vaddr;
		if (s < lo)
			lo = s;
		if (s + ph->p_memsz > hi)
			hi = s + ph->p_memsz;
	}
	if (hi <= lo)
		return 0;
	if (scan->count == scan->cap) {
		size_t cap = scan->cap ? 2 * scan->cap : 32;
		struct module *grown = realloc(scan->modules, cap * sizeof(*grown));
		if (!grown) {
			scan->err = -ENOMEM;
			return 1;
		}
		scan->modules = grown;
		scan->cap = cap;
	}
	m.start = lo;
	m.end = hi;
	m.base = info->dlpi_addr;
	read_build_id(info, &m);
	/* The main program comes first, with an empty name. */
	m.path = (info->dlpi_name && info->dlpi_name[0]) ? strdup(info->dlpi_name)
		 : scan->count == 0			 ? main_program_path()
							 : strdup("[anonymous]");
	if (!m.path) {
		scan->err = -ENOMEM;
		return 1;
	}
	/* read_build_id keeps build_id_bytes within build_id; saying so here also
	 * spares the compiler the hash's paths for longer inputs. */
	size_t id_bytes = m.build_id_bytes < sizeof(m.build_id) ? m.build_id_bytes
								: sizeof(m.build_id);
	m.key = id_bytes ? hash64(m.build_id, id_bytes, 0) : hash64(m.path, strlen(m.path), 0);
	scan->modules[scan->count++] = m;
	return 0;
}

static int by_start(const void *a, const void *b)
{
	const struct module *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static int read_counters(struct dl_phdr_info *info, size_t size, void *ctx)
{
	unsigned long long *c = ctx;

	c[0] = info->dlpi_adds;
	c[1] = info->dlpi_subs;
	return 1; /* the first module is enough */
}

unsigned long long module_unloads(void)
{
	unsigned long long counters[2] = {0, 0};

	dl_iterate_phdr(read_counters, counters);
	return counters[1];
}

static void free_modules(struct module *modules, size_t count)
{
	for (size_t i = 0; i < count; i++)
		free(modules[i].path);
	free(modules);
}

int module_table_refresh(struct module_table *table)
{
	unsigned long long counters[2] = {0, 0};
	struct scan scan = {0};

	dl_iterate_phdr(read_counters, counters);
	if (table->modules && counters[0] == table->adds && counters[1] == table->subs)
		return 0;
	dl_iterate_phdr(add_module, &scan);
	if (scan.err) {
		free_modules(scan.modules, scan.count);
		return scan.err;
	}
	/* dl_iterate_phdr lists the main program first; remember it before sorting. */
	uint64_t main_key = scan.count ? scan.modules[0].key : 0;
	qsort(scan.modules, scan.count, sizeof(*scan.modules), by_start);
	free_modules(table->modules, table->count);
	table->modules = scan.modules;
	table->count = scan.count;
	table->adds = scan.adds;
	table->subs = scan.subs;
	table->main_key = main_key;
	return 0;
}

const struct module *module_table_find(const struct module_table *table, uintptr_t ip)
{
	size_t lo = 0, hi = table->count;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct module *m = &table->modules[mid];
		if (ip < m->start)
			hi = mid;
		else if (ip >= m->end)
			lo = mid + 1;
		else
			return m;
	}
	return NULL;
}

uint64_t module_table_main_key(struct module_table *table)
{
	if (module_table_refresh(table) < 0)
		return 0;
	return table->main_key;
}
