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

struct own_writes {
	sigset_t old;
	bool blocked, pipe_pending, xfsz_pending;
};

void own_writes_begin(struct own_writes *w);
void own_writes_end(struct own_writes *w);
