/* libFuzzer target for what `memplan diff` and `check` do with two plans
 * (tools/plan_compare.c): pair their images, group and name their call sites.
 * Their plans come from CI artifacts, of any build or origin. Each input, its
 * checksum recomputed so that the structural checks are what is fuzzed, is
 * compared with itself once the reader takes it, which must show no change;
 * every site then gets its name, for text and for Markdown. No symbols are looked up (no
 * symboliser): those stored in the plan are used. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "plan_compare.h"
#include "plan_file.h"
#include "site_identity.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct plan_file_header *h;
	struct plan_comparison cmp;
	char why[256], name[512];

	if (size < sizeof(*h))
		return 0;
	h = malloc(size + 8); /* 8-byte aligned, as a mapping is */
	if (!h)
		return 0;
	memcpy(h, data, size);
	h->file_bytes = size;
	h->checksum = XXH3_64bits((char *)h + 32, size - 32);
	if (plan_file_validate(h, size, why, sizeof(why)) == 0 &&
	    plan_compare(h, h, NULL, &cmp) == 0) {
		for (size_t i = 0; i < cmp.image_count; i++) {
			const struct image_change *c = &cmp.images[i];
			/* Compared with itself, a plan has changed nowhere. */
			if (c->site_count || c->new_sites || c->gone_sites)
				abort();
			for (size_t k = 0; k < c->head_id_count; k++)
				site_identity_name(&c->head_ids[k], k & 1, name, sizeof(name));
		}
		plan_comparison_free(&cmp);
	}
	free(h);
	return 0;
}
