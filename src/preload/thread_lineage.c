/* Thread names that survive across runs, see thread_lineage.h. */
#include "thread_lineage.h"

#include "hash64.h"

__thread uint64_t thread_lineage __attribute__((tls_model("initial-exec")));
static __thread uint64_t children_created __attribute__((tls_model("initial-exec")));

uint64_t thread_lineage_next_child(void)
{
	uint64_t parts[2] = {thread_lineage, ++children_created};
	uint64_t name = hash64(parts, sizeof(parts), 0);

	return name ? name : 1; /* 0 is the main thread's */
}
