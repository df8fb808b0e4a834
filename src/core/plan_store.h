/* Adding one process image's plan to a plan file that several processes of one
 * recording share. Each process merges its image under an exclusive lock on the
 * file's directory, and the file is replaced atomically, so readers never see a
 * torn file and concurrent writers never lose each other's images. A file left by
 * an earlier recording (another record_id) is replaced, not merged. */
#pragma once

#include <stdint.h>

#include "plan_file.h"

/* How long a process waits for another's merge by default: a merge reads and
 * writes one plan file, well under a second for the biggest plans measured. */
#define PLAN_STORE_LOCK_WAIT_MS 10000

/* Merges image into the plan file at path. An image already there with the same
 * executable and arguments is replaced if it came from the same pid (a process
 * that wrote before a failed exec), or else the one with more entries is kept.
 * The lock is waited for at most lock_wait_ms milliseconds (a holder may be
 * stopped, or stuck): then -ETIMEDOUT, and nothing is written. Under the lock
 * nothing blocks but reading and writing regular files: a plan path that is not
 * one is refused (-EINVAL) before the lock is taken, and a file that is not a
 * plan (-EEXIST) under it. Returns 0 or a negative errno. May allocate. */
int plan_store_merge(const char *path, uint64_t record_id, const struct plan_image *image,
		     unsigned lock_wait_ms);

/* Takes the lock plan_store_merge takes to merge into the plan file at path,
 * for a writer that rewrites the file whole (adding symbols to it) without
 * losing an image that a process still running merges meanwhile. Waits at most
 * wait_ms milliseconds. Returns a descriptor (closing it releases the lock),
 * -ETIMEDOUT, or a negative errno. */
int plan_store_lock(const char *path, unsigned wait_ms);
