/* Record mode, see record.h.
 *
 * One mutex orders all events, which is what gives the logical clock a meaning
 * across threads. The recording (recording.h) plans as it goes, so at exit the
 * image only has to be written. Each allocation is recorded after libc returned
 * it and each free before libc sees it, so an address is never recorded twice. */
#define _GNU_SOURCE
#include "record.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "addr_map.h"
#include "callsite.h"
#include "file_io.h"
#include "own_writes.h"
#include "init.h"
#include "json_line.h"
#include "log.h"
#include "lone_atomic.h"
#include "real_libc.h"
#include "record_module.h"
#include "thread_lineage.h"
#include "uthash_libc.h"

struct site_index {
	uint64_t key;
	uint32_t index;
	UT_hash_handle hh;
};

/* Around each event; not taken while the process has one thread (lone_lock):
 * nothing else can be in the recording, and this thread's own signal handler
 * leaves it alone while the guard is set (init.c). */
static pthread_mutex_t record_mutex = PTHREAD_MUTEX_INITIALIZER;
static struct recording recording;
static const struct record_module *module; /* record_start's */
/* Allocation calls: those recorded are counted under the lock, which they take
 * anyway; only the others pay for an atomic add. */
static uint64_t alloc_calls_locked;
static _Atomic uint64_t alloc_calls;
static bool recording_on;
/* Allocations after MEMPLAN_MAX_ALLOCS are not recorded (said once). */
static bool limit_reached;

/* Each thread's lane (recording.h), numbered in the order threads first allocate,
 * found by the thread's lineage name; plus one, 0 until it is known. */
static __thread uint32_t lane_plus_one __attribute__((tls_model("initial-exec")));
static struct addr_map lane_of_lineage;
static uint32_t lane_count;
/* The tick at which each thread was created, by lineage name (keyed as in
 * lane_of_lineage), for its lane's lifetime (recording_thread_begins). */
static struct addr_map created_at;

/* Sites, built by the interner under the call-site lock. */
static struct site_index *sites_by_key;
static struct plan_site *sites;
static uint32_t site_count, site_capacity;
static struct plan_frame *frames;
static uint32_t frame_count, frame_capacity;

static bool grow(void **array, uint64_t *capacity, uint64_t need, size_t elem)
{
	uint64_t cap = *capacity ? *capacity : 4096;
	void *p;

	while (cap < need)
		cap *= 2;
	if (cap == *capacity)
		return true;
	p = *array ? __libc_realloc(*array, cap * elem) : __libc_malloc(cap * elem);
	if (!p)
		return false;
	*array = p;
	*capacity = cap;
	return true;
}

static uint32_t intern_site(void *ctx, uint64_t key, const struct plan_frame *site_frames,
			    uint32_t count)
{
	struct site_index *found;
	uint64_t cap;

	HASH_FIND(hh, sites_by_key, &key, sizeof(key), found);
	if (found)
		return found->index;
	cap = site_capacity;
	if (!grow((void **)&sites, &cap, site_count + 1, sizeof(*sites)))
		return CALLSITE_UNKNOWN;
	site_capacity = (uint32_t)cap;
	cap = frame_capacity;
	if (!grow((void **)&frames, &cap, (uint64_t)frame_count + count, sizeof(*frames)))
		return CALLSITE_UNKNOWN;
	frame_capacity = (uint32_t)cap;
	found = __libc_malloc(sizeof(*found));
	if (!found)
		return CALLSITE_UNKNOWN;
	found->key = key;
	found->index = site_count;
	HASH_ADD(hh, sites_by_key, key, sizeof(found->key), found);
	sites[site_count] = (struct plan_site){
	    .key = key,
	    .first_frame = frame_count,
	    .frame_count = count,
	};
	memcpy(frames + frame_count, site_frames, count * sizeof(*frames));
	frame_count += count;
	return site_count++;
}

int record_start(const struct record_module *recording_module, const char *why)
{
	static const struct callsite_interner interner = {intern_site, NULL, true, true};
	int r;

	module = recording_module;
	r = module ? callsite_init(preload_config.depth, &interner) : -ENOENT;
	if (r == 0)
		r = module->init(&recording);
	if (r == 0)
		r = addr_map_init(&lane_of_lineage, 64);
	if (r == 0)
		r = addr_map_init(&created_at, 64);
	if (r < 0) {
		if (module)
			why = r == -ENOENT ? "libgcc_s.so.1, whose unwinder finds call sites, "
					     "cannot be loaded"
					   : "out of memory";
		log_error("cannot start recording: ", why, NULL);
		return r;
	}
	recording_on = true;
	return 0;
}

/* A lineage can be 0 (the main thread): the maps want keys that are not. */
static uint64_t lineage_key(uint64_t lineage)
{
	return lineage * 2 + 1;
}

/* The calling thread's lane. Under the record lock. */
static uint32_t thread_lane(void)
{
	uint64_t lane, since;

	if (lane_plus_one)
		return lane_plus_one - 1;
	uint64_t key = lineage_key(thread_lineage);
	if (!addr_map_get(&lane_of_lineage, key, &lane)) {
		lane = lane_count++;
		addr_map_put(&lane_of_lineage, key, lane); /* on ENOMEM, found anew later */
	}
	lane_plus_one = (uint32_t)lane + 1;
	/* Not created while recording (the main thread): alive from the start. */
	if (!addr_map_get(&created_at, key, &since))
		since = 0;
	module->thread_begins(&recording, (uint32_t)lane, since);
	return (uint32_t)lane;
}

void record_thread_created(uint64_t lineage)
{
	bool held = lone_lock(&record_mutex);
	if (recording_on) /* on ENOMEM the thread counts as alive from the start */
		addr_map_put(&created_at, lineage_key(lineage), recording_now(&recording));
	lone_unlock(&record_mutex, held);
}

void record_thread_ended(void)
{
	if (!lane_plus_one)
		return; /* it never allocated: it has no lane */
	bool held = lone_lock(&record_mutex);
	if (recording_on)
		module->thread_ends(&recording, lane_plus_one - 1);
	lone_unlock(&record_mutex, held);
}

/* The recording numbers sites as the interner does; it learns of them lazily, under
 * the record lock. */
static bool know_site(uint32_t site)
{
	while (recording.site_count <= site)
		if (module->add_site(&recording) < 0)
			return false;
	return true;
}

/* know_site, for a site the calling thread allocates from: its lane is the thread's.
 * False also once the recording is full. */
static bool know_own_site(uint32_t site)
{
	if (recording.entry_count + recording.folded_count >= preload_config.max_allocs) {
		if (!limit_reached) { /* said now: at exit, stderr may be closed already */
			char n[21];
			log_error(
			    preload_config.plan_path, ": recording stopped after ",
			    log_u64(n, preload_config.max_allocs),
			    " allocations (MEMPLAN_MAX_ALLOCS); the plan covers the run until "
			    "then",
			    NULL);
		}
		limit_reached = true;
		return false;
	}
	return know_site(site) && module->site_lane(&recording, site, thread_lane()) == 0;
}

void record_alloc(void *p, size_t size, size_t align)
{
	uint32_t site;

	if (!p || !size || align > PLAN_MAX_ALIGN_BYTES ||
	    (site = callsite_capture(NULL)) == CALLSITE_UNKNOWN) {
		atomic_fetch_add_explicit(&alloc_calls, 1, memory_order_relaxed);
		return;
	}
	bool held = lone_lock(&record_mutex);
	alloc_calls_locked++;
	if (recording_on && know_own_site(site))
		module->alloc(&recording, (uintptr_t)p, site, size, align);
	lone_unlock(&record_mutex, held);
}

void record_free(void *p)
{
	if (!p)
		return;
	bool held = lone_lock(&record_mutex);
	if (recording_on)
		module->free(&recording, (uintptr_t)p);
	lone_unlock(&record_mutex, held);
}

uint64_t record_realloc_begin(void *old)
{
	uint64_t token = RECORDING_NO_TOKEN;

	if (!old)
		return token;
	bool held = lone_lock(&record_mutex);
	if (recording_on)
		token = module->realloc_begin(&recording, (uintptr_t)old);
	lone_unlock(&record_mutex, held);
	return token;
}

void record_realloc_done(uint64_t token, void *old, void *new_p, size_t size)
{
	uint32_t site = RECORDING_NO_SITE;

	if (new_p) {
		site = callsite_capture(NULL);
		if (site == CALLSITE_UNKNOWN)
			site = RECORDING_NO_SITE;
	}
	bool held = lone_lock(&record_mutex);
	if (new_p)
		alloc_calls_locked++;
	if (recording_on && site != RECORDING_NO_SITE && !know_own_site(site))
		site = RECORDING_NO_SITE; /* the old block still ends */
	if (recording_on)
		module->realloc_done(&recording, token, (uintptr_t)old, (uintptr_t)new_p, size,
				     site);
	lone_unlock(&record_mutex, held);
}

/* The image's string table: module paths, then the executable path and argv. */
static char *build_strings(struct plan_image *image, const char *module_strings,
			   uint64_t module_strings_bytes)
{
	const struct image_identity *id = &preload_config.image;
	size_t exe_bytes = strlen(id->exe_path);
	uint64_t total = module_strings_bytes + exe_bytes + 1 + id->args_bytes + 1;
	char *s = __libc_malloc(total);

	if (!s)
		return NULL;
	if (module_strings_bytes)
		memcpy(s, module_strings, module_strings_bytes);
	image->record.exe_path_offset = (uint32_t)module_strings_bytes;
	image->record.exe_path_bytes = (uint32_t)exe_bytes;
	memcpy(s + module_strings_bytes, id->exe_path, exe_bytes + 1);
	image->record.args_offset = (uint32_t)(module_strings_bytes + exe_bytes + 1);
	image->record.args_bytes = id->args_bytes;
	memcpy(s + image->record.args_offset, id->args, id->args_bytes);
	s[total - 1] = '\0';
	image->record.strings_bytes = total;
	return s;
}

/* Appends this image's line to the statistics file, if one was asked for: what
 * it recorded and whether its plan was written (why: why not, NULL if it was),
 * and whether the process said so on stderr (said). memplan record reads them
 * to say what happened, where the process could not. */
static void write_status(uint64_t calls, uint64_t entries, const char *why, bool said,
			 bool sandboxed)
{
	struct json_line j;

	if (!preload_config.stats_path[0])
		return;
	json_begin(&j);
	json_key_str(&j, "exe", preload_config.image.exe_path);
	json_key_u64(&j, "pid", (uint64_t)getpid());
	if (preload_config.image.fork_ordinal)
		json_key_u64(&j, "fork", preload_config.image.fork_ordinal);
	json_key_str(&j, "plan", preload_config.plan_path);
	json_key_u64(&j, "allocs", calls);
	json_key_u64(&j, "planned", entries);
	json_key_bool(&j, "written", !why);
	if (sandboxed) /* a sandbox refused the plan, or it covers the run up to one */
		json_key_bool(&j, "sandboxed", true);
	if (why) {
		json_key_str(&j, "error", why);
		json_key_bool(&j, "said", said);
	}
	json_end(&j);
	json_append_line(&j, preload_config.stats_path); /* a failure was said at start */
}

int record_finish(bool from_signal)
{
	struct planner_options opt = {
	    .time_limit_s = from_signal ? 0 : preload_config.plan_seconds,
	    .threads = 1,
	};
	struct plan_image image = {0};
	struct recording_built built = {0};
	const struct plan_module *modules;
	const char *module_strings;
	uint64_t module_strings_bytes;
	char *strings = NULL;
	struct plan_frame_size *frame_sizes = NULL;
	int r;

	pthread_mutex_lock(&record_mutex);
	/* A forked child that allocated nothing before it exec'ed or ended: no image. */
	if (!recording_on || (preload_config.image.fork_ordinal && !recording.entry_count)) {
		recording_on = false;
		pthread_mutex_unlock(&record_mutex);
		return 0;
	}
	recording_on = false;
	callsite_lock();
	/* First: it may add modules to the list callsite_modules gives. */
	bool sizes_complete;
	r = callsite_frame_sizes(&frame_sizes, &image.record.frame_size_count, &sizes_complete);
	image.frame_sizes = frame_sizes;
	if (r == 0 && sizes_complete)
		image.record.flags |= PLAN_IMAGE_FRAME_SIZES;
	callsite_modules(&modules, &image.record.module_count, &module_strings,
			 &module_strings_bytes);
	if (preload_config.image.fork_ordinal) {
		image.record.flags |= PLAN_IMAGE_FORKED;
		image.record.fork_ordinal = (uint32_t)preload_config.image.fork_ordinal;
	}
	image.record.exe_key = preload_config.image.exe_key;
	image.record.args_key = preload_config.image.args_key;
	image.record.pid = (uint32_t)getpid();
	image.record.depth = preload_config.depth;
	image.record.alloc_calls = atomic_load(&alloc_calls) + alloc_calls_locked;
	image.record.site_count = site_count;
	image.record.frame_count = frame_count;
	image.modules = modules;
	image.sites = sites;
	image.frames = frames;
	strings = r == 0 ? build_strings(&image, module_strings, module_strings_bytes) : NULL;
	r = strings ? 0 : -ENOMEM;
	image.strings = strings;
	if (r == 0 && site_count && !know_site(site_count - 1))
		r = -ENOMEM;
	if (r == 0)
		r = module->build(&recording, &image, &opt, &built);
	if (r == 0) {
		struct own_writes w;
		struct own_descriptors d;
		own_writes_begin(&w);
		own_descriptors_begin(&d);
		r = module->store_merge(preload_config.plan_path, preload_config.record_id, &image,
					preload_config.lock_wait_ms);
		own_descriptors_end(&d);
		own_writes_end(&w);
	}
	callsite_unlock();
	pthread_mutex_unlock(&record_mutex);
	const char *why = NULL;
	bool said = false;
	if (r == -ETIMEDOUT)
		why = "another process kept its directory locked past MEMPLAN_LOCK_SECONDS; "
		      "this process's plan is lost";
	else if (r == -EINVAL && file_check_regular_or_absent(preload_config.plan_path) < 0)
		why = "not a regular file";
	else if (r == -EEXIST) /* plan_store_merge: put there since start-up */
		why = "the file there is not a plan, and is left as it is";
	else if (r < 0)
		why = strerror(-r);
	const bool refused = r < 0 && preload_sandbox_refused(r);
	if (why && !refused)
		said = log_error(preload_config.plan_path, ": cannot write the plan: ", why, NULL);
	write_status(image.record.alloc_calls, image.record.entry_count, why, said,
		     refused || preload_is_sealed());

	__libc_free(strings);
	free(frame_sizes);
	module->built_free(&built);
	return r;
}

void record_before_fork(void)
{
	pthread_mutex_lock(&record_mutex);
}

void record_after_fork_parent(void)
{
	pthread_mutex_unlock(&record_mutex);
}

/* Forgets the call sites the interner knows, and the callers' caches of them:
 * from now on it numbers those met anew. Single-threaded (a forked child). */
static void forget_sites(void)
{
	struct site_index *s, *next;

	HASH_ITER(hh, sites_by_key, s, next)
	{
		HASH_DEL(sites_by_key, s);
		__libc_free(s);
	}
	site_count = 0;
	frame_count = 0;
	callsite_forget_sites();
}

/* The blocks the child inherited are not in its recording: it frees them as any
 * address the recording never saw, recording nothing. Its plan lists only the
 * call sites it allocates from: the parent's hundreds, listed in each child's
 * image, made 120 KB of plan a forked bash child of two dozen allocations (a
 * loop of 40 turns, a plan of 27 MB). Its frames' sizes stay learned, so
 * finding its sites anew is a walk each, not an unwind. */
bool record_after_fork_child(void)
{
	pthread_mutex_init(&record_mutex, NULL);
	callsite_after_fork_child();
	/* A shell loop of 600 forks gave 600 images, 2.4 MB of a 4.35 MB plan,
	 * whose image table every process of the replay reads. Children past
	 * an image's first IMAGE_FORKS_KEPT are not recorded; in replay, they
	 * take the image of the sibling that their parent's forks repeat
	 * (replay.c, sibling_image). */
	if (preload_config.image.fork_ordinal > IMAGE_FORKS_KEPT)
		recording_on = false;
	if (!recording_on)
		return false;
	module->fini(&recording);
	forget_sites();
	addr_map_fini(&lane_of_lineage);
	addr_map_fini(&created_at);
	lane_plus_one = 0;
	lane_count = 0;
	alloc_calls_locked = 0;
	atomic_store(&alloc_calls, 0);
	limit_reached = false;
	if (module->init(&recording) < 0 || addr_map_init(&lane_of_lineage, 64) < 0 ||
	    addr_map_init(&created_at, 64) < 0) {
		recording_on = false;
		return false;
	}
	return true;
}
