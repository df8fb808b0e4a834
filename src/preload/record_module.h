/* Recording and planning, in a module of their own.
 *
 * What records (recording.h) and plans at exit (the planners, the plan writer)
 * is half of memplan's code, and a replay runs none of it. Linked into
 * libmemplan.so it was resident in every replay all the same: the kernel maps
 * a library's code in 64 KiB windows around each page a process runs. So it
 * lives in libmemplan-record.so, beside libmemplan.so, which opens it at
 * start-up (never from an allocation: dlopen takes the loader's lock, see
 * frame_walk.h) and calls it through this table only to record. Replay opens
 * it too, so that the loader's tables, by which it sizes some of a later
 * dlopen's allocations, are the same as when recording (without it, a
 * plugin host's replay met one allocation of a size its recording never
 * made); the module has no initialisers, so none of its code is run, nor
 * mapped. libmemplan.so's code resident in a jq replay: 204 KiB before, 128
 * after. Replay opens it only before the program's first dlopen
 * (record_module_open_late): at start-up, the open was 22 us of every
 * replayed process's start (a shell script's head, sort and uniq: 175 us
 * in all), and most never call dlopen.
 *
 * The module is built from the pure core only: it holds no state of its own,
 * so the struct recording it works on stays libmemplan.so's. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "planner.h"
#include "recording.h"

#define RECORD_MODULE_FILE   MEMPLAN_RECORD_MODULE_NAME
#define RECORD_MODULE_SYMBOL "memplan_record_module"

/* The functions of recording.h and plan_store.h that record.c uses. */
struct record_module {
	int (*init)(struct recording *rec);
	void (*fini)(struct recording *rec);
	int (*add_site)(struct recording *rec);
	int (*site_lane)(struct recording *rec, uint32_t site, uint32_t lane);
	void (*thread_begins)(struct recording *rec, uint32_t lane, uint64_t since);
	void (*thread_ends)(struct recording *rec, uint32_t lane);
	int (*alloc)(struct recording *rec, uint64_t address, uint32_t site, uint64_t size,
		     uint64_t align);
	void (*free)(struct recording *rec, uint64_t address);
	uint64_t (*realloc_begin)(struct recording *rec, uint64_t old);
	void (*realloc_done)(struct recording *rec, uint64_t token, uint64_t old, uint64_t address,
			     uint64_t size, uint32_t site);
	int (*build)(struct recording *rec, struct plan_image *image,
		     const struct planner_options *opt, struct recording_built *built);
	void (*built_free)(struct recording_built *built);
	int (*store_merge)(const char *path, uint64_t record_id, const struct plan_image *image,
			   unsigned lock_wait_ms);
};

/* Opens the module that lies beside the libmemplan.so this is linked into:
 * its imports bound now if it is to record (so that the loader runs nowhere in
 * an allocation), else at their first call, which never comes (binding its 36
 * at load took 24,000 instructions of each replayed process's start). Returns
 * its table, or NULL with why (a static string, or dlerror's) set. Call with
 * the guard set, at start-up. */
const struct record_module *record_module_open(bool to_record, const char **why);

/* Where memplan wraps dlopen (deepbind.h: x86-64), replay sets
 * record_module_pending at start-up instead of opening the module, and the
 * wrapper calls record_module_open_late before the program's first dlopen
 * goes on. The loader's own opens (glibc's NSS and iconv modules, libgcc_s
 * for a thread's cancellation) pass the wrapper by: one of them before any
 * dlopen of the program's may meet an allocation of a size the recording
 * did not make, which replay passes to libc. So may a dlopen on another thread
 * while the first one opens the module: it does not wait. */
#if defined(__x86_64__)
#define RECORD_MODULE_LATE 1
#else
#define RECORD_MODULE_LATE 0
#endif
extern _Atomic bool record_module_pending;
void record_module_open_late(void);
