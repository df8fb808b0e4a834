/* Start-up, shutdown, fork and fatal signals for the preload library. See init.h.
 *
 * Every problem found here (bad environment, unwritable plan path, bad plan) is
 * reported in one line on stderr and leaves the program running on plain libc:
 * memplan never stops the host program. */
#define _GNU_SOURCE
#include "init.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "arena.h"
#include "atomic_file.h"
#include "big_bss.h"
#include "callsite.h"
#include "config.h"
#include "file_io.h"
#include "fresh_stack.h"
#include "deepbind.h"
#include "guard.h"
#include "log.h"
#include "next_alloc.h"
#include "plan_file.h"
#include "plan_store.h"
#include "program_handlers.h"
#include "real_libc.h"
#include "record.h"
#include "record_module.h"
#include "replay.h"
#include "signal_hook.h"
#include "stats_file.h"
#include "strict.h"
#include "valgrind_tool.h"

extern void *__libc_stack_end; /* glibc: the stack top at process start */

__thread int guard_depth __attribute__((tls_model("initial-exec")));
_Atomic int preload_mode = PRELOAD_OFF;
/* On pages of its own from its start: its buffers are pages, each touched
 * only at its start. */
struct preload_config preload_config BIG_BSS __attribute__((aligned(4096)));

/* The process that owns the recording or statistics: a forked child (or a vfork
 * child calling exec) has another pid and never finishes for it. */
static pid_t owner_pid;
static atomic_flag finish_started = ATOMIC_FLAG_INIT;
static atomic_bool finish_done;

/* How long a thread that would end the process waits for another one to write
 * the plan: the plan file's lock, and a few seconds for the rest. */
#define FINISH_WAIT_EXTRA_MS 5000u

/* Waits until the thread that started writing the plan is done, or for the
 * lock's deadline and a few seconds more: a thread that ends the process
 * (a second signal, exit) must not cut the write short, nor wait forever on a
 * writer stuck behind a lock this thread holds (libc's, inside a handler).
 * Async-signal-safe. */
static void wait_finished(void)
{
	const struct timespec tick = {0, 1000000};
	uint64_t waited_ms = 0, limit_ms = preload_config.lock_wait_ms + FINISH_WAIT_EXTRA_MS;

	while (!atomic_load(&finish_done) && waited_ms++ < limit_ms)
		nanosleep(&tick, NULL);
}

void preload_finish(bool from_signal)
{
	sigset_t all, old;

	/* Finished when the program sandboxed itself: no system call now, not even
	 * getpid or the signal mask's, which the sandbox may forbid (in a child
	 * forked since, say). */
	if (preload_is_sealed() && atomic_load(&finish_done))
		return;
	if (getpid() != owner_pid)
		return;
	/* A signal now would end the process in the middle of writing and leave a
	 * stray temporary file: hold them until the plan is in place. Held before
	 * the writing is claimed, so that no handler on this thread finds it
	 * claimed, by this very thread, and waits for it. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	if (atomic_flag_test_and_set(&finish_started)) {
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		wait_finished(); /* another thread writes it */
		return;
	}
	int mode = preload_mode_now();
	if (guard_active() && mode == PRELOAD_RECORD) {
		/* The process ends on a thread inside memplan's code (exit in a
		 * handler memplan could not hold: program_handlers.h): the recording
		 * may be half updated, and this thread may hold the locks writing it
		 * takes. Replay's statistics take no lock: they are written. */
		log_error("a signal handler ended the process inside an allocation; "
			  "this process's plan is not written",
			  NULL);
		atomic_store(&preload_mode, PRELOAD_OFF);
		atomic_store(&finish_done, true);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		return;
	}
	guard_enter();
	if (mode == PRELOAD_RECORD) {
		/* Stop recording first: the plan describes what ran until now. */
		atomic_store(&preload_mode, PRELOAD_OFF);
		record_finish(from_signal);
	} else if (mode == PRELOAD_REPLAY) {
		replay_finish();
	}
	/* Before the guard is left: a signal deferred meanwhile (by another
	 * thread's handler) is then raised at once, not waited for. */
	atomic_store(&finish_done, true);
	guard_leave();
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static atomic_bool sealed;

void preload_seal(bool strict)
{
	if (!atomic_exchange(&sealed, true)) {
		/* A filter set for every thread (SECCOMP_FILTER_FLAG_TSYNC) must
		 * not meet another thread's read of the plan half done. */
		replay_wait_reads();
		preload_finish(false);
	}
	/* Arena blocks are still freed into the arena, with no system call. */
	arena_keep_pages();
	if (strict)
		atomic_store(&preload_mode, PRELOAD_OFF);
}

bool preload_is_sealed(void)
{
	return atomic_load_explicit(&sealed, memory_order_relaxed);
}

_Atomic unsigned guard_pending;

/* Signals raised by what the thread itself just did: returning from their
 * handler would only do it again. */
static bool is_synchronous(int sig)
{
	return sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL ||
	       sig == SIGTRAP || sig == SIGSYS || sig == SIGABRT;
}

static void finish_from_signal(void *unused)
{
	(void)unused;
	preload_finish(true);
}

/* Notes sig for the first thread to leave memplan's code. Async-signal-safe. */
static void defer_signal(int sig)
{
	unsigned was = atomic_load(&guard_pending);

	while (!atomic_compare_exchange_weak(&guard_pending, &was,
					     (was & ~GUARD_PENDING_SIGNAL) | (unsigned)sig))
		;
}

/* Why a recording ends with no plan when the program faults inside its
 * allocator: most often libc, finding its heap corrupt (a double free, a write
 * past a block), aborts the program from within free or malloc. Writing the
 * plan then could wait forever on the lock libc holds. Async-signal-safe. */
static void say_plan_lost(int sig)
{
	static const char *const names[] = {
	    [SIGSEGV] = "SIGSEGV", [SIGBUS] = "SIGBUS", [SIGFPE] = "SIGFPE",   [SIGILL] = "SIGILL",
	    [SIGTRAP] = "SIGTRAP", [SIGSYS] = "SIGSYS", [SIGABRT] = "SIGABRT",
	};
	char digits[21];
	const char *name = sig > 0 && (size_t)sig < sizeof(names) / sizeof(names[0]) && names[sig]
			       ? names[sig]
			       : log_u64(digits, (uint64_t)sig);

	if (preload_mode_now() != PRELOAD_RECORD || getpid() != owner_pid)
		return;
	log_error("the program ended on ", name,
		  " inside an allocation call (libc stops a program whose heap it finds "
		  "corrupt, as after a double free); this process's plan is not written",
		  NULL);
}

/* The signal this process is ending by, once memplan's handler has taken it:
 * it writes the plan first, and meanwhile the program's other threads run on.
 * A child one of them forks then would not exist without memplan, and would
 * outlive its parent, untouched by the signal already sent to the group: it
 * ends by the same signal at once (after_fork_child). */
static _Atomic int ending_signal;

static void on_fatal_signal(int sig)
{
	int saved = errno;

	/* Inside memplan's own code (or libc's allocator under it) on this thread the
	 * tables may be half-updated. A signal sent from outside (kill, ^C) waits
	 * until the thread leaves that code (guard_leave): an allocation-heavy
	 * program spends most of its time there. A fault of the thread's own cannot
	 * wait: no plan rather than a wrong one. */
	if (guard_active() && !is_synchronous(sig)) {
		defer_signal(sig);
		errno = saved;
		return;
	}
	atomic_store(&ending_signal, sig);
	if (!guard_active())
		fresh_stack_run(finish_from_signal, NULL); /* the program's may be small */
	else
		say_plan_lost(sig);
	errno = saved;
	/* Blocked while the handler runs: it ends the process as it returns. */
	signal_hook_default_all();
	raise(sig);
}

void guard_run_deferred(void)
{
	if (guard_held_signals)
		program_handlers_release(); /* the program's handlers run now */
	/* Threads that hold signals bring every thread here: only a signal to
	 * act on is worth a write to the shared word. */
	if (!(atomic_load(&guard_pending) & GUARD_PENDING_SIGNAL))
		return;
	int sig = (int)(atomic_fetch_and(&guard_pending, ~GUARD_PENDING_SIGNAL) &
			GUARD_PENDING_SIGNAL);
	if (!sig)
		return;
	atomic_store(&ending_signal, sig);
	fresh_stack_run(finish_from_signal, NULL);
	signal_hook_default_all();
	raise(sig);
}

/* Forks this image has made: the next child is the next one (image_identity_fork). */
static uint64_t forks_made;

/* The forking thread's signal mask before fork (the kernel's 64 signals, bit
 * sig - 1 each), restored once parent and child are done with memplan's part.
 * In between every signal waits but those raised by the thread's own
 * instructions, which cannot wait. A child starts with the guard its parent
 * set for the fork, and drops what the parent deferred (guard_pending) or
 * held: a signal sent to the child in between, before it had run, was taken
 * for the parent's and lost. A process pool that ends a worker it has only
 * just started (Python's multiprocessing.Pool leaving its `with` block)
 * then waited for it forever (tests/faults/test-term-at-fork.sh). Not in a
 * sealed process, whose sandbox may forbid the system call
 * (tests/preload/test-sandbox.sh): there the race is left. */
static __thread uint64_t mask_before_fork __attribute__((tls_model("initial-exec")));
static __thread bool masked_for_fork __attribute__((tls_model("initial-exec")));

#define SIGNAL_BIT(sig) (UINT64_C(1) << ((sig)-1))

static bool mask_for_fork(int how, const uint64_t *set, uint64_t *old)
{
	return real_libc()->syscall(SYS_rt_sigprocmask, how, (long)set, (long)old, sizeof(*set), 0,
				    0) == 0;
}

/* The mask before fork back in place, if fork changed it. */
static void unmask_after_fork(void)
{
	if (masked_for_fork)
		mask_for_fork(SIG_SETMASK, &mask_before_fork, NULL);
	masked_for_fork = false;
}

/* A signal that ends the process, sent to it but not yet taken (or 0), as the
 * forking thread finds it once it has blocked them all: one this thread did
 * not block before, so that it takes it as soon as fork is done, and the
 * process ends by it. The child forked now would not exist without memplan's
 * handler (the default action ends every thread at once), nor ever see the
 * signal: it ends by it at once (after_fork_child). One the program blocks
 * (a daemon that reads SIGTERM from a signalfd) ends nothing. */
static __thread int fork_ending_by __attribute__((tls_model("initial-exec")));

static int fatal_signal_pending(uint64_t open)
{
	uint64_t pending;

	if (real_libc()->syscall(SYS_rt_sigpending, (long)&pending, sizeof(pending), 0, 0, 0, 0) <
	    0)
		return 0;
	for (pending &= open; pending; pending &= pending - 1) {
		const int sig = __builtin_ctzll(pending) + 1;
		if (signal_hook_is_hooked(sig))
			return sig;
	}
	return 0;
}

static void before_fork(void)
{
	uint64_t wait = ~UINT64_C(0);

	for (int sig = 1; sig <= 64; sig++)
		if (is_synchronous(sig))
			wait &= ~SIGNAL_BIT(sig);
	masked_for_fork =
	    !preload_is_sealed() && mask_for_fork(SIG_BLOCK, &wait, &mask_before_fork);
	fork_ending_by = masked_for_fork ? fatal_signal_pending(~mask_before_fork) : 0;
	guard_enter();
	record_before_fork();
	forks_made++;
}

static void after_fork_parent(void)
{
	record_after_fork_parent();
	guard_leave();
	fork_ending_by = 0;
	unmask_after_fork();
}

/* A child forked without exec runs code of its own: it is an image of its own,
 * and records a plan of its own. In replay it replays that plan in an arena of
 * its own if there is one, and else goes on serving its parent's plan from its
 * private copy of the parent's arena; either way it writes statistics of its
 * own. */
static void after_fork_child(void)
{
	/* fork returns to the child with errno as it was, whatever the child's
	 * plan took to read, and is no cancellation point, though reading it
	 * opens and reads a file. */
	const int saved_errno = errno;
	int cancel_state;
	bool own;

	const int ending = fork_ending_by ? fork_ending_by : atomic_load(&ending_signal);
	if (ending) {
		struct sigaction dfl = {.sa_handler = SIG_DFL};
		const uint64_t one = SIGNAL_BIT(ending);
		real_libc()->sigaction(ending, &dfl, NULL);
		raise(ending);
		mask_for_fork(SIG_UNBLOCK, &one, NULL);
	}
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
	/* The child's own end is its own to finish: its parent's may be under way
	 * (exit on another thread), and would keep it waiting. Not in a sealed
	 * process, whose finish came at the seal and is the child's too: it
	 * makes system calls a sandbox forbids. */
	if (!preload_is_sealed()) {
		atomic_flag_clear(&finish_started);
		atomic_store(&finish_done, false);
	}
	/* The parent's signals, deferred or held, are the parent's to act on. */
	const uint64_t dropped = program_handlers_after_fork_child();
	if (masked_for_fork)
		mask_before_fork &= ~dropped;
	else if (dropped)
		mask_for_fork(SIG_UNBLOCK, &dropped, NULL);
	atomic_store(&guard_pending, 0);
	image_identity_fork(&preload_config.image, forks_made);
	forks_made = 0;
	if (preload_mode_now() == PRELOAD_RECORD) {
		own = record_after_fork_child();
		if (!own)
			atomic_store(&preload_mode, PRELOAD_OFF);
	} else {
		record_after_fork_child();
		replay_after_fork_child();
		own = true;
	}
	if (own)
		owner_pid = getpid();
	guard_leave();
	unmask_after_fork();
	pthread_setcancelstate(cancel_state, NULL);
	errno = saved_errno;
}

/* Makes path absolute (children may chdir) and exports it under name for them. */
static int absolute_path(const char *name, const char *path, char *out, size_t cap)
{
	size_t len;

	if (path[0] == '/') {
		if (strlen(path) >= cap)
			return -ENAMETOOLONG;
		strcpy(out, path);
		return 0;
	}
	if (!getcwd(out, cap))
		return -errno;
	len = strlen(out);
	if (len + 1 + strlen(path) >= cap)
		return -ENAMETOOLONG;
	out[len] = '/';
	strcpy(out + len + 1, path);
	setenv(name, out, 1);
	return 0;
}

static bool parse_unsigned(const char *s, unsigned long min, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	if (!s || !*s || *s == '-' || *s == '+')
		return false;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return false;
	*out = v;
	return true;
}

/* Reads the environment into preload_config. Returns the mode to run in. */
static enum preload_mode read_environment(void)
{
	const char *mode = getenv("MEMPLAN_MODE"), *s;
	enum preload_mode wanted;
	unsigned long v;

	if (!mode || !*mode || strcmp(mode, "off") == 0)
		return PRELOAD_OFF;
	if (strcmp(mode, "record") == 0) {
		wanted = PRELOAD_RECORD;
	} else if (strcmp(mode, "replay") == 0) {
		wanted = PRELOAD_REPLAY;
	} else {
		log_error_once("MEMPLAN_MODE='", mode,
			       "' is not record, replay or off; running on libc", NULL);
		return PRELOAD_OFF;
	}
	/* Silent: the tool's allocator is what its user asked for. */
	if (valgrind_tool_replaces_allocator(getenv("LD_PRELOAD")))
		return PRELOAD_OFF;

	s = getenv("MEMPLAN_PLAN");
	if (!s || !*s) {
		log_error_once("MEMPLAN_MODE=", mode, " needs MEMPLAN_PLAN; running on libc", NULL);
		return PRELOAD_OFF;
	}
	if (absolute_path("MEMPLAN_PLAN", s, preload_config.plan_path,
			  sizeof(preload_config.plan_path)) < 0) {
		log_error_once(s, ": cannot make the plan path absolute; running on libc", NULL);
		return PRELOAD_OFF;
	}

	preload_config.depth = MEMPLAN_DEFAULT_DEPTH;
	s = getenv("MEMPLAN_DEPTH");
	if (s && *s) {
		if (!parse_unsigned(s, 1, CALLSITE_MAX_DEPTH, &v)) {
			log_error_once("MEMPLAN_DEPTH='", s,
				       "' is not a whole number from 1 to 64; running on libc",
				       NULL);
			return PRELOAD_OFF;
		}
		preload_config.depth = (unsigned)v;
	}

	preload_config.plan_seconds = 0.25;
	s = getenv("MEMPLAN_PLAN_SECONDS");
	if (s && *s) {
		char *end;
		double d = strtod(s, &end);
		if (*end || !(d >= 0 && d <= 3600)) {
			log_error_once(
			    "MEMPLAN_PLAN_SECONDS='", s,
			    "' is not a number of seconds from 0 to 3600; running on libc", NULL);
			return PRELOAD_OFF;
		}
		preload_config.plan_seconds = d;
		preload_config.plan_seconds_given = true;
	}

	/* A recording's memory is bounded by what the program does, not by how long
	 * it runs (recording.h): no limit unless one is asked for. */
	preload_config.max_allocs = UINT64_MAX;
	s = getenv("MEMPLAN_MAX_ALLOCS");
	if (s && *s) {
		if (!parse_unsigned(s, 1, 1ul << 40, &v)) {
			log_error_once("MEMPLAN_MAX_ALLOCS='", s,
				       "' is not a whole number from 1 to 2^40; running on libc",
				       NULL);
			return PRELOAD_OFF;
		}
		preload_config.max_allocs = v;
	}

	preload_config.lock_wait_ms = PLAN_STORE_LOCK_WAIT_MS;
	s = getenv("MEMPLAN_LOCK_SECONDS");
	if (s && *s) {
		if (!parse_unsigned(s, 0, 3600, &v)) {
			log_error_once("MEMPLAN_LOCK_SECONDS='", s,
				       "' is not a whole number from 0 to 3600; running on libc",
				       NULL);
			return PRELOAD_OFF;
		}
		preload_config.lock_wait_ms = (unsigned)v * 1000;
	}

	/* As MEMPLAN_STRICT: 0 or 1; another value is said, and left off. */
	s = getenv("MEMPLAN_PREFAULT");
	preload_config.prefault = s && strcmp(s, "1") == 0;
	if (s && *s && strcmp(s, "0") != 0 && !preload_config.prefault)
		log_error_once("MEMPLAN_PREFAULT='", s, "' is not 0 or 1; not prefaulting", NULL);

	s = getenv("MEMPLAN_STATS");
	if (s && *s &&
	    absolute_path("MEMPLAN_STATS", s, preload_config.stats_path,
			  sizeof(preload_config.stats_path)) < 0) {
		log_error_once(s, ": cannot make the statistics path absolute; running on libc",
			       NULL);
		return PRELOAD_OFF;
	}
	s = getenv("MEMPLAN_STATS_NO_CREATE");
	preload_config.stats_no_create = s && strcmp(s, "1") == 0;
	return wanted;
}

/* One id per recording, shared by its processes through the environment: it tells
 * an old plan file (replaced) from one this recording is filling (merged), and
 * whether memplan record re-plans it afterwards (PLAN_RECORD_ID_REPLANNED). */
static void read_record_id(void)
{
	const char *s = getenv("MEMPLAN_RECORD_ID");
	char buf[21];
	struct timespec now;
	unsigned long long v;
	char *end;

	if (s && *s) {
		v = strtoull(s, &end, 10);
		if (!*end && v) {
			preload_config.record_id = v;
			if ((v & PLAN_RECORD_ID_REPLANNED) && !preload_config.plan_seconds_given)
				preload_config.plan_seconds = 0;
			return;
		}
	}
	clock_gettime(CLOCK_REALTIME, &now);
	preload_config.record_id = (((uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec) ^
				    ((uint64_t)getpid() << 40)) &
				   ~PLAN_RECORD_ID_REPLANNED;
	if (!preload_config.record_id)
		preload_config.record_id = 2;
	setenv("MEMPLAN_RECORD_ID", log_u64(buf, preload_config.record_id), 1);
}

/* What is wrong with an output path that file_open_append refused with err. */
static const char *output_problem(int err)
{
	if (err == -ENXIO)
		return "a FIFO that no process reads";
	if (err == -EINVAL)
		return "not a file, a device or a pipe";
	return strerror(-err);
}

/* Whether this process runs under a seccomp filter or strict mode ("Seccomp:"
 * in /proc/self/status is not 0): one it was started in, such as the one
 * man-db puts its helpers in, whose filter answers ENOSYS to writing a file. */
static bool under_seccomp(void)
{
	static const char key[] = "\nSeccomp:\t";
	char buf[4096];
	ssize_t got = 0, n;
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	while (got < (ssize_t)sizeof(buf) - 1 &&
	       (n = read(fd, buf + got, sizeof(buf) - 1 - (size_t)got)) > 0)
		got += n;
	close(fd);
	buf[got > 0 ? got : 0] = '\0';
	const char *at = strstr(buf, key);
	return at && at[sizeof(key) - 1] >= '1' && at[sizeof(key) - 1] <= '9';
}

bool preload_sandbox_refused(int err)
{
	return (err == -ENOSYS || err == -EPERM) && under_seccomp();
}

static int start_mode(enum preload_mode mode)
{
	int r;

	if (image_identity_read(&preload_config.image, callsite_main_module_key()) < 0)
		log_error_once("cannot read /proc/self: plans will not match across runs", NULL);
	/* Report an unwritable statistics file now: at exit stderr may be closed. */
	if (preload_config.stats_path[0]) {
		int err = stats_file_check(preload_config.stats_path,
					  !preload_config.stats_no_create);
		if (err == STATS_FILE_IS_PLAN)
			log_error_once(preload_config.stats_path,
				       ": is a plan, not a statistics file; no statistics are "
				       "written to it",
				       NULL);
		if (err > 0) /* or a process that outlived memplan record or replay */
			preload_config.stats_path[0] = '\0';
		if (err < 0) {
			if (!preload_sandbox_refused(err))
				log_error_once(preload_config.stats_path,
					       ": cannot write statistics: ", output_problem(err),
					       NULL);
			preload_config.stats_path[0] = '\0';
		}
	}
	/* Replay loads the record module too, and runs none of its code (it has
	 * no initialisers): the loader sizes some of its own allocations by the
	 * objects loaded, and a later dlopen's are the program's to replay. It
	 * does so before the program's first dlopen, where it can. */
	const char *why = NULL;
	const struct record_module *module = NULL;
	if (mode == PRELOAD_RECORD || !RECORD_MODULE_LATE)
		module = record_module_open(mode == PRELOAD_RECORD, &why);
	else
		atomic_store(&record_module_pending, true);
	if (mode == PRELOAD_RECORD) {
		read_record_id();
		r = file_check_regular_or_absent(preload_config.plan_path);
		if (r == -EINVAL) {
			log_error(preload_config.plan_path,
				  ": not a regular file; not recording", NULL);
			return r;
		}
		if (!plan_file_may_replace(preload_config.plan_path)) {
			log_error(preload_config.plan_path,
				  ": exists and is not a plan, which a plan never replaces; "
				  "not recording",
				  NULL);
			return -EEXIST;
		}
		r = atomic_file_check_writable(preload_config.plan_path);
		if (r < 0 && preload_sandbox_refused(r))
			return r;
		if (r < 0) {
			log_error(preload_config.plan_path,
				  ": cannot write the plan here: ", strerror(-r), "; not recording",
				  NULL);
			return r;
		}
		return record_start(module, why);
	}
	return replay_start();
}

__attribute__((constructor)) static void preload_init(void)
{
	enum preload_mode mode;

	/* Even in a program memplan leaves alone, what it passes on goes to the
	 * program's own allocator. */
	next_alloc_find();
	/* Set-user-ID and similar programs: an environment variable must not make
	 * them write files or change how they allocate. */
	if (getauxval(AT_SECURE))
		return;
	guard_enter();
	real_libc();
	/* The main thread's stack top, for call-site cache keys (callsite.h): its
	 * first frames lie below where the kernel left the stack. Then the bounds of
	 * its stack mapping, for stack walks. */
	callsite_stack_base = (uintptr_t)__libc_stack_end;
	callsite_note_main_stack();
	mode = read_environment();
	const char *ahead = mode != PRELOAD_OFF ? next_alloc_ahead() : NULL;
	if (ahead && next_alloc_ahead_is_memplan()) {
		log_error_once("LD_PRELOAD holds memplan's library twice, ", ahead,
			       " first; this copy stays off", NULL);
		mode = PRELOAD_OFF;
	} else if (ahead) {
		log_error_once("malloc is ", ahead, "'s, which comes before libmemplan.so in ",
			       "LD_PRELOAD, so memplan would see no allocation; ",
			       mode == PRELOAD_RECORD ? "not recording" : "not replaying",
			       " (put libmemplan.so first)", NULL);
		mode = PRELOAD_OFF;
	}
	/* 1: replay found the plan unreadable, and counts what goes to libc. */
	const int r = mode != PRELOAD_OFF ? start_mode(mode) : -EINVAL;
	bool started = r >= 0;
	if (started) {
		owner_pid = getpid();
		pthread_atfork(before_fork, after_fork_parent, after_fork_child);
		program_handlers_start();
		signal_hook_install(on_fatal_signal);
		deepbind_start();
		atomic_store(&preload_mode, mode);
	}
	if (mode == PRELOAD_REPLAY)
		strict_start(r == 0);
	guard_leave();
}

__attribute__((destructor)) static void preload_fini(void)
{
	preload_finish(false);
}
