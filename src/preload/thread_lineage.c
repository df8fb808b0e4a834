/* Thread names that survive across runs, see thread_lineage.h. */
#include "thread_lineage.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

__thread uint64_t thread_lineage __attribute__((tls_model("initial-exec")));
static __thread uint64_t children_created __attribute__((tls_model("initial-exec")));

uint64_t thread_lineage_next_child(void)
{
	uint64_t parts[2] = {thread_lineage, ++children_created};
	uint64_t name = XXH3_64bits(parts, sizeof(parts));

	return name ? name : 1; /* 0 is the main thread's */
}
