/* The program's own signal handlers run outside memplan's code.
 *
 * A handler may end the process (exit), jump out (siglongjmp) or allocate. Run
 * on a thread interrupted inside memplan, which holds its locks and may have a
 * table half updated, each of those goes wrong: exit waits for a lock its own
 * thread holds (a hang), a jump leaves the lock held and the thread inside
 * memplan for good, an allocation sees half-updated tables. glibc's malloc has
 * the same hazards, but a program spends little time in it; under record, an
 * allocating thread spends most of its time in memplan.
 *
 * So every handler the program sets through sigaction (or signal and the
 * like, built on it) is installed behind a trampoline. A signal that finds its
 * thread inside memplan is kept, with its siginfo, and blocked on that thread
 * (further ones wait in the kernel); as the thread leaves memplan's code
 * (guard_leave) the handler runs with what it was sent, under the mask the
 * kernel would give it, and the signal is unblocked. No system call but the
 * signal mask's: a sandbox's seccomp filter may forbid the others (Chromium's
 * does not allow rt_tgsigqueueinfo). Faults raised by the thread's own instruction
 * (SIGSEGV, SIGBUS...) and SIGABRT run at once: returning would only raise
 * them again. sigaction reports the program's own handler, flags and mask. */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

/* Signals held on this thread until it leaves memplan's code: bit sig - 1. */
extern __thread volatile uint64_t guard_held_signals __attribute__((tls_model("initial-exec")));

/* Notes that the program set sig's disposition to act (NULL: only asked)
 * before memplan started. Called by the shims, which are bound before any
 * initialiser runs. */
void program_handlers_note(int sig, const struct sigaction *act);

/* From now on, handlers set in this process go behind the trampoline; those
 * set already (program_handlers_note) go behind it now. Call before memplan's
 * hook is installed. */
void program_handlers_start(void);

/* A forked child owns the copy of the table it inherited, and drops the
 * signals its parent's thread held (they are the parent's). Returns them, bit
 * sig - 1 each: blocked in the mask the child inherited, for the caller to
 * unblock as the parent will. */
uint64_t program_handlers_after_fork_child(void);

/* Whether this process may change the table: started, and not a vfork child
 * (which shares its parent's memory until it execs). */
bool program_handlers_own_table(void);

/* Whether the program's handler for sig is behind the trampoline. */
bool program_handlers_wrapped(int sig);

/* Whether act is a handler of the program's to put behind the trampoline. */
bool program_handlers_want(int sig, const struct sigaction *act);

/* Notes act as the program's handler for sig and fills *kernel_act with the
 * trampoline to install in its place. */
void program_handlers_wrap(int sig, const struct sigaction *act, struct sigaction *kernel_act);

/* Whether act is the trampoline (a library bound to libc's own sigaction may
 * have replaced it). */
bool program_handlers_is_trampoline(const struct sigaction *act);

/* The program's handler for sig as it set it. */
void program_handlers_get(int sig, struct sigaction *act);

/* Notes whether the trampoline is the kernel's handler for sig now. */
void program_handlers_set_wrapped(int sig, bool wrapped);

/* Notes that the trampoline is no longer sig's handler: disposition
 * (SIG_DFL, SIG_IGN) replaced it. */
void program_handlers_unwrap(int sig, void (*disposition)(int));

/* Runs the handlers of the signals held on this thread, and unblocks them.
 * Called as the thread leaves memplan's code. */
void program_handlers_release(void);
