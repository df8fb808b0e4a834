/* A name for each thread that is the same in every run: the main thread is 0, and
 * the k-th thread created by a thread named p is named hash(p, k). As long as each
 * thread creates its threads in a fixed order, a worker gets the same name in the
 * recording and in the replay, whatever the scheduler does.
 *
 * Call sites are keyed by (stack, thread name), so each thread's allocations keep
 * their own occurrence numbers: threads that interleave differently in replay
 * still find their own plan entries. */
#pragma once

#include <stdint.h>

extern __thread uint64_t thread_lineage __attribute__((tls_model("initial-exec")));

/* The name the calling thread gives to the next thread it creates. */
uint64_t thread_lineage_next_child(void);
