/* Turning a frame (module, offset) back into functions, files and lines with
 * elfutils' libdw, after the fact and on any machine that has the binaries,
 * with their separate debug information where it is installed
 * (/usr/lib/debug/.build-id/). A module whose build-id on disk differs from the
 * recorded one is not trusted. Every result is cached: a module is opened once,
 * and each of its offsets looked up once, however many images share it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The most functions kept for one frame: its own and those inlined into it. */
#define FRAME_SYMBOLS_MAX 32

/* One function at a frame's code, as memplan stores it (struct plan_symbol). */
struct frame_symbol {
	const char *function; /* demangled; NULL if unknown */
	const char *file;     /* NULL if unknown */
	uint32_t line;	      /* 0 if unknown */
	bool inlined;	      /* inlined into the next symbol's function */
};

struct symbolizer;

/* Returns a new symbolizer, or NULL on ENOMEM. It never asks a debuginfod
 * server (it unsets DEBUGINFOD_URLS in this process): a recording must not wait
 * on the network. May allocate. */
struct symbolizer *symbolizer_new(void);
void symbolizer_free(struct symbolizer *s);

/* From seconds from now on, lookups read ELF symbol tables only, no debug
 * information (no inline frames, files or lines): bounds the time a lookup of
 * many frames takes. Results found before are kept. */
void symbolizer_set_budget(struct symbolizer *s, double seconds);

/* Opens the module at path, keyed by the build-id its file has now, and reads
 * what its first lookup would: its debug information (decompressing libc's
 * takes some 50 ms) and its functions. Lookups of that module with that
 * build-id then find it ready. May allocate; not thread-safe. */
void symbolizer_warm(struct symbolizer *s, const char *path);

/* Looks up the code at offset (a return address, relative to the load bias) of
 * the module at path whose build-id was build_id (build_id_bytes 0: none
 * recorded). Points *out at the functions found there, innermost first: those
 * inlined (flagged), then the function whose code it is, whose name is its ELF
 * symbol's where it has one. Returns how many (0 if nothing is known). The
 * symbols and their strings live until symbolizer_free. May allocate; not
 * thread-safe. */
unsigned symbolizer_lookup(struct symbolizer *s, const char *path, const uint8_t *build_id,
			   unsigned build_id_bytes, uint64_t offset,
			   const struct frame_symbol **out);
