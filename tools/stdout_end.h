/* Ending what a command wrote to standard output. A reader that left early
 * (`memplan show PLAN | head -1`) is no failure to report: git log and other
 * tools end there by SIGPIPE, silently, with status 141. memplan's commands
 * that read symbols run on a thread with every signal blocked (deep_stack.h),
 * and replay handles SIGPIPE (launch.c), so their writes fail with EPIPE
 * instead; they end with the same status. */
#pragma once

#include <stdio.h>

/* The status of a process that SIGPIPE ended, as a shell gives it. */
#define STDOUT_END_READER_GONE 141

/* Flushes out (standard output). Returns 0 if all written out was written;
 * STDOUT_END_READER_GONE if not, because out is a pipe or a socket whose
 * reader has gone: the caller exits with it and says nothing; else -1 with
 * errno set (ENOSPC, EIO...), for the caller to say. */
int stdout_end(FILE *out);
