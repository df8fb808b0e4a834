/* uthash, allocating straight from libc. memplan's own tables must never be
 * recorded or served from the arena, and must not re-enter the shims; and an
 * out-of-memory must not exit the host program (uthash's default), so additions
 * are non-fatal and callers check that the item went in. */
#pragma once

#include "real_libc.h"

#define uthash_malloc(sz)	 __libc_malloc(sz)
#define uthash_free(ptr, sz)	 __libc_free(ptr)
#define HASH_NONFATAL_OOM	 1
#define uthash_nonfatal_oom(obj) ((void)(obj))

#include <uthash.h>
