/* Allocates and frees as a packing instance says: reads MiniMalloc CSV rows
 * (id,lower,upper,size) from a file and, in time order, frees each block at its
 * upper time (frees first at equal times) and allocates it at its lower time,
 * each row from a call site of its own (one of 16 functions, the row's sixteenth,
 * so that no site repeats a steady pattern). The recorded plan then holds the
 * instance: a hard one for the planner, whose re-planning uses its whole budget.
 * usage: dsa_replay FILE.csv */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct row {
	unsigned long long lower, upper, size;
	void *p;
};

struct event {
	unsigned long long t;
	int is_alloc;
	size_t row;
};

static int by_time(const void *a, const void *b)
{
	const struct event *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	if (x->is_alloc != y->is_alloc)
		return x->is_alloc - y->is_alloc;
	return x->row < y->row ? -1 : x->row > y->row;
}

typedef void *(*alloc_fn)(size_t);
#define SITE(n)                                                                                    \
	static __attribute__((noinline)) void *site##n(size_t size)                                \
	{                                                                                          \
		void *p = malloc(size);                                                            \
		__asm__ volatile("" : : "r"(p) : "memory");                                        \
		return p;                                                                          \
	}
SITE(0) SITE(1) SITE(2) SITE(3) SITE(4) SITE(5) SITE(6) SITE(7)
SITE(8) SITE(9) SITE(10) SITE(11) SITE(12) SITE(13) SITE(14) SITE(15)
static const alloc_fn sites[16] = {site0, site1, site2,  site3,  site4,  site5,  site6,  site7,
				   site8, site9, site10, site11, site12, site13, site14, site15};

int main(int argc, char **argv)
{
	FILE *f = argc == 2 ? fopen(argv[1], "r") : NULL;
	struct row *rows = NULL;
	size_t n = 0, cap = 0;
	char line[256];

	if (!f) {
		fprintf(stderr, "usage: dsa_replay FILE.csv\n");
		return 2;
	}
	if (!fgets(line, sizeof(line), f)) /* the header */
		return 1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long id, lower, upper, size;
		if (sscanf(line, "%llu,%llu,%llu,%llu", &id, &lower, &upper, &size) != 4)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 256;
			rows = realloc(rows, cap * sizeof(*rows));
			if (!rows)
				return 1;
		}
		rows[n++] = (struct row){lower, upper, size, NULL};
	}
	fclose(f);
	struct event *ev = malloc(2 * n * sizeof(*ev) + 1);
	if (!ev)
		return 1;
	for (size_t i = 0; i < n; i++) {
		ev[2 * i] = (struct event){rows[i].lower, 1, i};
		ev[2 * i + 1] = (struct event){rows[i].upper, 0, i};
	}
	qsort(ev, 2 * n, sizeof(*ev), by_time);
	unsigned long long sum = 0;
	for (size_t k = 0; k < 2 * n; k++) {
		struct row *r = &rows[ev[k].row];
		if (ev[k].is_alloc) {
			r->p = sites[ev[k].row % 16](r->size);
			memset(r->p, 1, r->size);
		} else {
			sum += ((unsigned char *)r->p)[0];
			free(r->p);
		}
	}
	printf("%zu blocks, %llu\n", n, sum);
	free(ev);
	free(rows);
	return 0;
}
