/* libmemplan-record.so: the core's recording and planning, as the table that
 * libmemplan.so calls them through (record_module.h). */
#include "plan_store.h"
#include "record_module.h"

__attribute__((visibility("default"))) const struct record_module memplan_record_module = {
    .init = recording_init,
    .fini = recording_fini,
    .add_site = recording_add_site,
    .site_lane = recording_site_lane,
    .thread_begins = recording_thread_begins,
    .thread_ends = recording_thread_ends,
    .alloc = recording_alloc,
    .free = recording_free,
    .realloc_begin = recording_realloc_begin,
    .realloc_done = recording_realloc_done,
    .build = recording_build,
    .built_free = recording_built_free,
    .store_merge = plan_store_merge,
};
