/* Running the user's command under the preload library and passing its exit
 * status through. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Adds the preload library in front of LD_PRELOAD. Returns 0 or exits 1 after a
 * message if the library cannot be found. */
int launch_add_preload(void);

/* Whether libmemplan-record.so, which the preload library opens to record,
 * lies beside it. Returns 0, or -1 after a message naming the file. */
int launch_check_record_module(void);

/* Writes path made absolute (against the working directory) into out: children
 * may chdir, so paths handed to them in the environment must be absolute.
 * Returns 0, or -ENAMETOOLONG / a negative errno from getcwd. */
int launch_absolute_path(const char *path, char *out, size_t cap);

/* Exports the variables that put the preload library in mode ("record" or
 * "replay") on plan (an absolute path) for the recording record_id. Both modes
 * set the same variables, their values of the same lengths (the id is written
 * in 20 digits, the modes have 6 letters, and the statistics file of a run is a
 * temporary name of fixed length unless the user names one): programs size
 * their tables by their environment (git's copy of environ grows by 8 bytes a
 * variable), and a replay whose environment is shaped otherwise than the
 * recording's would allocate otherwise. */
void launch_set_mode(const char *mode, const char *plan, uint64_t record_id);

/* Raises memplan's own limit on open descriptors, which a user sets for the
 * command (ulimit -n 4), to what memplan's files need; the command gets the
 * user's limit back before it starts (launch_run). Call before memplan opens
 * anything. */
void launch_raise_descriptor_limit(void);

/* Runs argv (searched in PATH) and waits for it. Returns its exit status, or
 * 128 + signal number if a signal ended it, or, after a message, 127 if it was
 * not found and 126 if it could not be run (as a shell says). SIGTERM, SIGHUP,
 * SIGINT and SIGQUIT sent to memplan while it waits are passed on to the
 * command, and memplan waits on for it: the command ends as the signal makes it
 * end (a recording writes its plan), and memplan's status says so. (A signal
 * sent to the whole process group, as ^C or timeout send it, reaches the
 * command twice; the preload library takes the second for the first.) From
 * then on, a write of memplan's to a pipe whose reader is gone fails with
 * EPIPE instead of ending memplan (the command's SIGPIPE stays its own). */
int launch_run(char **argv);

/* launch_run, calling started(ctx) once the command has started, while it
 * runs: work to do meanwhile, on threads that must not exist when memplan
 * forks. */
int launch_run_then(char **argv, void (*started)(void *ctx), void *ctx);

/* Whether the last command run was started (its program found and run), and
 * the signal that ended it (0 if it exited). */
bool launch_started(void);
int launch_signal(void);

/* memplan's own end, once its work after the command is done: status, or, for
 * a command that a signal ended (status 128 + N, N launch_signal), the same
 * signal, as memplan were not there. A shell stops its loop at a child that
 * ^C ended, not at one that exited 130; and a parent's waitpid tells the two
 * apart. No core is dumped of memplan: the command's is the one. Returns
 * only if the signal does not end memplan. */
int launch_end_as_command(int status);

/* Whether launch_run passed a signal on to the command (^C, SIGTERM): one
 * that came as the command ended may have found it gone, and is the user's
 * wish all the same. */
bool launch_signal_passed(void);

/* Makes memplan the parent of the processes the command leaves running when
 * their own parent ends (a shell's background job, a daemon), instead of init
 * (PR_SET_CHILD_SUBREAPER), so that launch_wait_left can wait for them. Call
 * before launch_run. Returns 0 or a negative errno. */
int launch_adopt_left(void);

/* The processes the command left running, once launch_run has returned: reaps
 * those that ended and returns how many are still running, described in
 * what[] ("pid 123 sleep, pid 124 python3", the first few and how many more). */
unsigned launch_left(char *what, size_t cap);

/* Waits up to seconds for the processes the command left running to end,
 * reaping them. A SIGINT, SIGTERM, SIGHUP or SIGQUIT sent to memplan meanwhile
 * sets *signalled and cuts the wait to one more second (^C also reaches the
 * terminal's foreground jobs, which then end and write what they recorded);
 * one while *signalled is set ends it, and a wait begun with it set lasts a
 * second at most. Neither is passed on. Returns how many
 * are still running. */
unsigned launch_wait_left(double seconds, bool *signalled);

/* How long memplan record and replay wait, by default, for the processes the
 * command left running (--wait-left), and how long of it they stay quiet:
 * most background jobs end within a second (Python's resource tracker ends as
 * the main process's pipe closes). */
#define LAUNCH_WAIT_LEFT_SECONDS  10.0
#define LAUNCH_WAIT_QUIET_SECONDS 1.0

/* The wait of --wait-left: up to seconds for what cmd (its name, escaped) left
 * running, saying after the quiet second for whom and why ("its allocations
 * are part of the plan"). Returns how many are still running when it is over,
 * described in what[] as launch_left does; 0 if seconds is 0 (no wait, and
 * nothing to say). */
unsigned launch_wait_for_left(double seconds, const char *cmd, const char *why, char *what,
			      size_t cap);
