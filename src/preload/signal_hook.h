/* memplan's hook on the signals that end a process, kept out of the program's sight.
 *
 * To write the plan when a signal ends the process, memplan handles each signal
 * whose default action ends it, where the program has left that default. Programs
 * look at those dispositions: CPython turns ^C into KeyboardInterrupt only if
 * SIGINT was at its default when it started, and shells decide how to treat
 * signals from what they inherit. So sigaction and signal are interposed: while
 * memplan's handler is in place, asking gets the answer "default"; a program that
 * sets a disposition of its own replaces memplan's handler, as it would have
 * replaced the default; and one that sets the default back gets memplan's handler
 * again, hidden the same way. bsd_signal, sysv_signal and sigset are rebuilt on
 * the same sigaction. A handler of the program's own is installed behind a
 * trampoline that keeps it out of memplan's code (program_handlers.h), and
 * reported as the program set it. */
#pragma once

#include <stdbool.h>

/* Installs handler for every such signal that is at its default. While it runs
 * on a thread, all of those signals wait on that thread: a signal sent to a
 * process group reaches the program twice when memplan's CLI passes it on
 * too, and the second must not cut the plan's writing short (on another
 * thread, the handler waits for the writer: init.c). Call once, at start-up,
 * before the program runs. */
void signal_hook_install(void (*handler)(int));

/* Whether memplan's hook stands in for sig's default action, which ends the
 * process. Async-signal-safe. */
bool signal_hook_is_hooked(int sig);

/* Sets every hooked signal to its default action, for ending the process once
 * the plan is written: whichever of them is then delivered ends it.
 * Async-signal-safe. */
void signal_hook_default_all(void);

/* Sets sig to its default disposition as the program would (memplan's hook
 * where it hooks the default), for a handler set with SA_RESETHAND.
 * Async-signal-safe. */
void signal_hook_reset_default(int sig);
