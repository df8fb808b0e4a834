/* Reading libc's debug information while the recorded command runs: `memplan
 * record` stores the symbols of the plan's call sites once the command has
 * ended, and nearly every plan has frames in libc, whose separate debug
 * information (libc6-dbg) takes tens of milliseconds to open, as much as a
 * short command's whole recording. This process's libc is the command's,
 * unless the command brings its own. */
#pragma once

#include <pthread.h>
#include <stdbool.h>

struct symbolizer;

struct symbol_warmer {
	struct symbolizer *sym;
	pthread_t thread;
	bool running;
};

/* Makes w's symbolizer and warms it for this process's libc on a thread of its
 * own, which takes no signals. If either cannot be, w holds what could be
 * made (the symbolizer, or none). Call once no other thread runs a fork. */
void symbol_warmer_start(struct symbol_warmer *w);

/* Waits for the warming to end and hands over the symbolizer (the caller frees
 * it), or NULL if none could be made. */
struct symbolizer *symbol_warmer_take(struct symbol_warmer *w);
