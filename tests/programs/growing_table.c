/* A table that grows with the input, beside a steady loop: the shape of a
 * program whose plan, recorded on a short input, cannot hold a longer one.
 * usage: growing_table ROWS [fork]. Each turn adds a row (table_row: kept to
 * the end) and makes two short-lived scratch blocks (scratch: freed at once);
 * with "fork", a child then does a few turns of scratch and exits. Prints a
 * checksum of the rows, and exits 1 if one was found overwritten. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct row {
	struct row *next;
	uint64_t id;
	char text[40];
};

static __attribute__((noinline)) struct row *table_row(struct row *next, uint64_t id)
{
	struct row *r = malloc(sizeof(*r));
	if (!r)
		abort();
	r->next = next;
	r->id = id;
	snprintf(r->text, sizeof(r->text), "row %llu", (unsigned long long)id);
	return r;
}

static __attribute__((noinline)) uint64_t scratch(uint64_t id)
{
	char *p = malloc(64 + id % 128);
	if (!p)
		abort();
	memset(p, (int)(id & 0x7f), 64);
	uint64_t sum = (unsigned char)p[id % 64];
	free(p);
	return sum;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	const uint64_t rows = strtoull(argv[1], NULL, 10);
	struct row *table = NULL;
	uint64_t sum = 0;

	for (uint64_t i = 0; i < rows; i++) {
		table = table_row(table, i);
		sum += scratch(i) + scratch(i + 1);
	}
	if (argc > 2 && !strcmp(argv[2], "fork")) {
		pid_t child = fork();
		if (child == 0) {
			for (uint64_t i = 0; i < 100; i++)
				sum += scratch(i);
			exit(sum == 0);
		}
		int status;
		if (child < 0 || waitpid(child, &status, 0) != child || status != 0)
			return 1;
	}
	for (uint64_t i = rows; table; table = table->next) {
		char want[40];
		snprintf(want, sizeof(want), "row %llu", (unsigned long long)--i);
		if (table->id != i || strcmp(table->text, want))
			return 1;
		sum += table->id;
	}
	printf("%llu\n", (unsigned long long)sum);
	return 0;
}
