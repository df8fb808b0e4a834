/* Prints what must be the same in two recordings of the same deterministic
 * program: per image (sorted by executable and arguments), its site keys and
 * every entry's site key, occurrence, size, alignment and lifetime. Pids, record
 * ids and checksums are left out. usage: plan-digest PLAN */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan_file.h"

struct named_image {
	struct plan_image image;
	const char *exe;
};

static int by_name(const void *a, const void *b)
{
	const struct named_image *x = a, *y = b;
	int c = strcmp(x->exe, y->exe);

	if (c)
		return c;
	return (x->image.record.args_key > y->image.record.args_key) -
	       (x->image.record.args_key < y->image.record.args_key);
}

int main(int argc, char **argv)
{
	char why[256];
	void *buf;
	size_t len;

	if (argc != 2) {
		fprintf(stderr, "usage: plan-digest PLAN\n");
		return 2;
	}
	if (plan_file_load(argv[1], &buf, &len, why, sizeof(why)) < 0) {
		fprintf(stderr, "plan-digest: %s: %s\n", argv[1], why);
		return 1;
	}
	uint32_t n = plan_file_header(buf)->image_count;
	struct named_image *images = calloc(n ? n : 1, sizeof(*images));
	for (uint32_t i = 0; i < n; i++) {
		plan_file_image(buf, i, &images[i].image);
		images[i].exe = images[i].image.strings + images[i].image.record.exe_path_offset;
	}
	qsort(images, n, sizeof(*images), by_name);
	for (uint32_t i = 0; i < n; i++) {
		const struct plan_image *im = &images[i].image;
		printf("image %s exe_key %016llx args_key %016llx sites %u entries %llu\n",
		       images[i].exe, (unsigned long long)im->record.exe_key,
		       (unsigned long long)im->record.args_key, im->record.site_count,
		       (unsigned long long)im->record.entry_count);
		for (uint32_t s = 0; s < im->record.site_count; s++)
			printf("site %u %016llx\n", s, (unsigned long long)im->sites[s].key);
		struct plan_entry *entries;
		if (plan_image_entries(im, &entries) < 0) {
			fprintf(stderr, "plan-digest: out of memory\n");
			return 1;
		}
		for (uint64_t e = 0; e < im->record.entry_count; e++) {
			const struct plan_entry *en = &entries[e];
			printf("entry %016llx %u %llu %u %llu %llu %llu\n",
			       (unsigned long long)im->sites[en->site].key, en->occurrence,
			       (unsigned long long)en->size_bytes, en->align_bytes,
			       (unsigned long long)en->t_start, (unsigned long long)en->t_end,
			       (unsigned long long)en->in_place_of);
		}
		free(entries);
	}
	free(images);
	free(buf);
	return 0;
}
