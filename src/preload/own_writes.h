/* memplan's own writes (a plan, a statistics line, a message) must not end
 * the program. A write past the program's file-size limit raises SIGXFSZ,
 * and one to a pipe whose reader has gone raises SIGPIPE; by default either
 * ends the process, which alone would never have written there (a program
 * that set RLIMIT_FSIZE to 1 KiB for its own files died under record with
 * status 153, its buffered output lost). Between own_writes_begin and
 * own_writes_end both are blocked on this thread: the write fails with EFBIG
 * or EPIPE instead, which memplan reports, and a signal it raised is taken
 * back; one that was already pending is left to the program. Only system
 * calls: async-signal-safe, and no cancellation point. */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <sys/resource.h>

struct own_writes {
	sigset_t old;
	bool blocked, pipe_pending, xfsz_pending;
};

void own_writes_begin(struct own_writes *w);
void own_writes_end(struct own_writes *w);

/* A plan's write takes a few descriptors (the file, its directory's lock, the
 * plan already there), a statistics line one. A program that lowered its soft limit to what it uses
 * itself (ulimit -Sn 4) left memplan none, and lost its plan: between
 * own_descriptors_begin and _end the soft limit is OWN_DESCRIPTORS higher,
 * within the hard limit. Process-wide for that moment: a thread of the
 * program that opens a file meanwhile may get a descriptor above its own
 * limit, as it would have had the limit been that high. */
#define OWN_DESCRIPTORS 8
struct own_descriptors {
	struct rlimit old;
	bool raised;
};

void own_descriptors_begin(struct own_descriptors *d);
void own_descriptors_end(struct own_descriptors *d);
