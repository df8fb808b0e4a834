/* Symbolisation with libdw, see symbolize.h. Each module is reported to one
 * offline Dwfl at its own base, once, and looked up by path and build-id. */
#define _GNU_SOURCE
#include "symbolize.h"

#include <elfutils/libdwfl.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct module_slot {
	char *path;
	Dwfl *dwfl; /* NULL if the module could not be opened or did not match */
	Dwfl_Module *module;
};

struct symbolizer {
	struct module_slot *slots;
	size_t count, cap;
};

static const Dwfl_Callbacks offline_callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
};

struct symbolizer *symbolizer_new(void)
{
	return calloc(1, sizeof(struct symbolizer));
}

void symbolizer_free(struct symbolizer *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->count; i++) {
		if (s->slots[i].dwfl)
			dwfl_end(s->slots[i].dwfl);
		free(s->slots[i].path);
	}
	free(s->slots);
	free(s);
}

static struct module_slot *open_module(struct symbolizer *s, const char *path,
				       const struct plan_module *pm)
{
	struct module_slot *slot;

	for (size_t i = 0; i < s->count; i++)
		if (!strcmp(s->slots[i].path, path))
			return &s->slots[i];
	if (s->count == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;
		struct module_slot *grown = realloc(s->slots, cap * sizeof(*grown));
		if (!grown)
			return NULL;
		s->slots = grown;
		s->cap = cap;
	}
	slot = &s->slots[s->count++];
	memset(slot, 0, sizeof(*slot));
	slot->path = strdup(path);
	if (path[0] != '/')
		return slot; /* [vdso], [unknown] */
	slot->dwfl = dwfl_begin(&offline_callbacks);
	if (!slot->dwfl)
		return slot;
	/* Base 0: offsets in the plan are relative to the load bias, which is what an
	 * ELF file's own addresses are. */
	slot->module = dwfl_report_elf(slot->dwfl, path, path, -1, 0, false);
	dwfl_report_end(slot->dwfl, NULL, NULL);
	if (slot->module && pm->build_id_bytes) {
		const unsigned char *bits;
		GElf_Addr vaddr;
		int n = dwfl_module_build_id(slot->module, &bits, &vaddr);
		if (n != pm->build_id_bytes || memcmp(bits, pm->build_id, (size_t)n) != 0)
			slot->module = NULL; /* the file changed since recording */
	}
	return slot;
}

void symbolizer_frame(struct symbolizer *s, const struct plan_image *image,
		      const struct plan_frame *f, char *out, size_t cap)
{
	const struct plan_module *pm = &image->modules[f->module];
	const char *path = plan_image_module_path(image, f->module);
	char *path_copy = strdup(path);
	const char *base = path_copy ? basename(path_copy) : path;
	struct module_slot *slot = open_module(s, path, pm);
	/* A return address points after the call; look up the call itself. */
	GElf_Addr addr = f->offset ? f->offset - 1 : 0;
	const char *name = NULL, *file = NULL;
	GElf_Off sym_off = 0;
	GElf_Sym sym;
	int line = 0;

	if (slot && slot->module) {
		name = dwfl_module_addrinfo(slot->module, addr, &sym_off, &sym, NULL, NULL, NULL);
		Dwfl_Line *l = dwfl_module_getsrc(slot->module, addr);
		if (l)
			file = dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL);
	}
	if (name && file)
		snprintf(out, cap, "%s+0x%" PRIx64 " (%s:%d) in %s", name, (uint64_t)sym_off + 1,
			 file, line, base);
	else if (name)
		snprintf(out, cap, "%s+0x%" PRIx64 " in %s", name, (uint64_t)sym_off + 1, base);
	else
		snprintf(out, cap, "%s+0x%" PRIx64, base, (uint64_t)f->offset);
	free(path_copy);
}
