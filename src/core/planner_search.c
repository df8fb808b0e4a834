/* Branch-and-bound improvement (see planner_search.h). */
#include "planner_search.h"

int search_improve(const struct plan_item *it, size_t m, const struct search_params *params,
		   uint64_t *off, uint64_t *arena_bytes)
{
	(void)it;
	(void)m;
	(void)params;
	(void)off;
	(void)arena_bytes;
	return 0;
}
