/* Exits 0 if PLAN is a sound plan of this tree's format (read whole and
 * validated: header, tables, checksum, every block of entries decoded), else
 * prints why and exits 1; exits 3 for a plan of another format version, which
 * only the build that wrote it can judge (lib.sh then asks that build's
 * memplan show). usage: plan-check PLAN */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan_file.h"

int main(int argc, char **argv)
{
	char why[256];
	void *buf;
	size_t len;
	struct plan_file_header h;

	if (argc != 2) {
		fprintf(stderr, "usage: plan-check PLAN\n");
		return 2;
	}
	FILE *f = fopen(argv[1], "rb");
	if (f && fread(&h, 1, sizeof(h), f) == sizeof(h) && !memcmp(h.magic, PLAN_FILE_MAGIC, 8) &&
	    h.version != PLAN_FILE_VERSION) {
		fprintf(stderr, "plan-check: %s: format version %u, not %u\n", argv[1], h.version,
			PLAN_FILE_VERSION);
		fclose(f);
		return 3;
	}
	if (f)
		fclose(f);
	if (plan_file_load(argv[1], &buf, &len, why, sizeof(why)) < 0) {
		fprintf(stderr, "plan-check: %s: %s\n", argv[1], why);
		return 1;
	}
	free(buf);
	return 0;
}
