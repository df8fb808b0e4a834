/* Adding one process image's plan to a plan file that several processes of one
 * recording share. Each process merges its image under an exclusive lock on the
 * file's directory, and the file is replaced atomically, so readers never see a
 * torn file and concurrent writers never lose each other's images. A file left by
 * an earlier recording (another record_id) is replaced, not merged. */
#pragma once

#include <stdint.h>

#include "plan_file.h"

/* Merges image into the plan file at path. An image already there with the same
 * executable and arguments is replaced if it came from the same pid (a process
 * that wrote before a failed exec), or else the one with more entries is kept.
 * Returns 0 or a negative errno. May allocate; takes a file lock. */
int plan_store_merge(const char *path, uint64_t record_id, const struct plan_image *image);
