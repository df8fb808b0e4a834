/* Adding symbols to a recorded plan, see plan_symbolize.h. */
#define _GNU_SOURCE
#include "plan_symbolize.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "frame_symbols.h"
#include "hash_table.h"
#include "plan_file.h"
#include "plan_replan.h"
#include "plan_store.h"
#include "symbolize.h"

/* Where a string of the symbolizer (one copy per text, so known by its
 * address) went in an image's string table. */
struct placed_string {
	const char *text;
	uint32_t offset;
	UT_hash_handle hh;
};

/* An image's tables being built: the old string table with new strings after
 * it, the symbols, and each frame's first symbol. */
struct symbol_tables {
	char *strings;
	size_t strings_bytes, strings_cap;
	struct plan_symbol *symbols;
	size_t symbol_count, symbol_cap;
	uint32_t *frame_symbols;
	struct placed_string *placed;
};

static void tables_free(struct symbol_tables *t)
{
	struct placed_string *p, *next;

	HASH_ITER(hh, t->placed, p, next)
	{
		HASH_DEL(t->placed, p);
		free(p);
	}
	free(t->strings);
	free(t->symbols);
	free(t->frame_symbols);
	memset(t, 0, sizeof(*t));
}

static int grow(void **array, size_t *cap, size_t need, size_t item_bytes)
{
	if (need <= *cap)
		return 0;
	size_t cap2 = *cap ? *cap : 64;
	while (cap2 < need)
		cap2 *= 2;
	void *grown = realloc(*array, cap2 * item_bytes);
	if (!grown)
		return -ENOMEM;
	*array = grown;
	*cap = cap2;
	return 0;
}

/* The offset of text in the string table, adding it if it is not there yet;
 * PLAN_NO_STRING for NULL. Returns 0 or -ENOMEM (-E2BIG past 4 GiB). */
static int place_string(struct symbol_tables *t, const char *text, uint32_t *offset)
{
	struct placed_string *p;

	*offset = PLAN_NO_STRING;
	if (!text)
		return 0;
	HASH_FIND_PTR(t->placed, &text, p);
	if (p) {
		*offset = p->offset;
		return 0;
	}
	size_t len = strlen(text) + 1;
	if (t->strings_bytes + len >= PLAN_NO_STRING)
		return -E2BIG;
	if (grow((void **)&t->strings, &t->strings_cap, t->strings_bytes + len, 1) < 0 ||
	    !(p = malloc(sizeof(*p))))
		return -ENOMEM;
	memcpy(t->strings + t->strings_bytes, text, len);
	p->text = text;
	p->offset = (uint32_t)t->strings_bytes;
	t->strings_bytes += len;
	HASH_ADD_PTR(t->placed, text, p);
	*offset = p->offset;
	return 0;
}

/* Builds the symbol tables of im (which has none) into t, its strings first
 * (attach gives them to im). Returns 0 or a negative errno. */
static int symbolize_image(const struct plan_image *im, struct symbolizer *sym,
			   struct symbol_tables *t)
{
	const struct plan_image_record *r = &im->record;
	int err;

	t->frame_symbols = malloc(((size_t)r->frame_count + 1) * sizeof(*t->frame_symbols));
	if (!t->frame_symbols ||
	    grow((void **)&t->strings, &t->strings_cap, r->strings_bytes, 1) < 0)
		return -ENOMEM;
	memcpy(t->strings, im->strings, r->strings_bytes);
	t->strings_bytes = r->strings_bytes;
	for (uint32_t f = 0; f < r->frame_count; f++) {
		struct frame_symbol found[FRAME_SYMBOLS_MAX];
		unsigned n = frame_symbols_get(im, f, sym, found, FRAME_SYMBOLS_MAX);

		t->frame_symbols[f] = (uint32_t)t->symbol_count;
		if (grow((void **)&t->symbols, &t->symbol_cap, t->symbol_count + n,
			 sizeof(*t->symbols)) < 0)
			return -ENOMEM;
		for (unsigned k = 0; k < n; k++) {
			struct plan_symbol *y = &t->symbols[t->symbol_count++];
			y->line = found[k].line;
			y->flags = found[k].inlined ? PLAN_SYMBOL_INLINED : 0;
			if ((err = place_string(t, found[k].function, &y->function)) < 0 ||
			    (err = place_string(t, found[k].file, &y->file)) < 0)
				return err;
		}
	}
	if (t->symbol_count > UINT32_MAX - 1)
		return -E2BIG;
	t->frame_symbols[r->frame_count] = (uint32_t)t->symbol_count;
	return 0; /* with no symbol_count, nothing known: the image stays as it was */
}

/* An image's symbols found by plan_symbols_find, and what tells the image: its
 * process image, its frames and its strings, which the tables extend. */
struct found_image {
	struct plan_image_record record;
	struct symbol_tables tables;
};

/* Whether the image found earlier is image (the same process image, with the
 * same frames and strings, which its tables extend). */
static bool same_image(const struct plan_image_record *f, const struct plan_image_record *r)
{
	return f->exe_key == r->exe_key && f->args_key == r->args_key && f->pid == r->pid &&
	       f->fork_ordinal == r->fork_ordinal && f->entry_count == r->entry_count &&
	       f->frame_count == r->frame_count && f->strings_bytes == r->strings_bytes;
}

/* The symbols found for the image of record r, or NULL. Images keep their
 * order in the file, so the search starts at *next, after the last one found
 * (a shell script's plan holds a thousand images), and moves it on. */
static const struct found_image *find_found(const struct plan_symbols *found,
					    const struct plan_image_record *r, uint32_t *next)
{
	for (uint32_t j = 0; found && j < found->count; j++) {
		uint32_t k = (*next + j) % found->count;
		if (same_image(&found->images[k].record, r)) {
			*next = k + 1;
			return &found->images[k];
		}
	}
	return NULL;
}

int plan_symbols_find(const char *path, uint64_t record_id, struct symbolizer *sym,
		      struct plan_symbols *out, char *why, size_t why_len)
{
	const void *buf = NULL;
	size_t len = 0;
	int r;

	memset(out, 0, sizeof(*out));
	r = plan_file_map(path, &buf, &len, why, why_len);
	if (r < 0 || plan_file_header(buf)->record_id != record_id) {
		if (buf)
			plan_file_unmap((void *)buf, len);
		return r < 0 ? r : 0; /* another recording's, which says what it wrote */
	}
	uint32_t n = plan_file_header(buf)->image_count;
	out->images = calloc(n ? n : 1, sizeof(*out->images));
	r = out->images ? 0 : -ENOMEM;
	symbolizer_set_budget(sym, PLAN_SYMBOLIZE_BUDGET_S);
	for (uint32_t i = 0; r == 0 && i < n; i++) {
		struct found_image *f = &out->images[out->count];
		struct plan_image im;
		plan_file_image(buf, i, &im);
		if (im.record.symbol_count)
			continue; /* a process merged it after an earlier pass */
		f->record = im.record;
		out->count++;
		r = symbolize_image(&im, sym, &f->tables);
	}
	plan_file_unmap((void *)buf, len);
	if (r < 0) {
		snprintf(why, why_len, "cannot find its symbols: %s", strerror(-r));
		plan_symbols_free(out);
	}
	return r;
}

void plan_symbols_free(struct plan_symbols *s)
{
	for (uint32_t i = 0; s->images && i < s->count; i++)
		tables_free(&s->images[i].tables);
	free(s->images);
	memset(s, 0, sizeof(*s));
}

/* Gives im the symbols of tables, if they hold any. */
static void attach(struct plan_image *im, const struct symbol_tables *t)
{
	if (!t->symbol_count)
		return;
	im->strings = t->strings;
	im->record.strings_bytes = t->strings_bytes;
	im->symbols = t->symbols;
	im->frame_symbols = t->frame_symbols;
	im->record.symbol_count = (uint32_t)t->symbol_count;
}

int plan_symbolize_file(const char *path, uint64_t record_id, const struct plan_symbols *found,
			const struct plan_replan *replan, char *why, size_t why_len)
{
	struct symbolizer *sym = NULL;
	struct symbol_tables *tables = NULL;
	struct plan_image *images = NULL;
	const void *buf = NULL;
	size_t len = 0;
	uint32_t n = 0;
	int lock_fd, r;

	lock_fd = plan_store_lock(path, PLAN_STORE_LOCK_WAIT_MS);
	if (lock_fd < 0) {
		snprintf(why, why_len, "cannot lock its directory: %s", strerror(-lock_fd));
		return lock_fd;
	}
	r = plan_file_map(path, &buf, &len, why, why_len);
	if (r < 0)
		goto fail;
	if (plan_file_header(buf)->record_id != record_id)
		goto out; /* another recording's, which says what it wrote */
	n = plan_file_header(buf)->image_count;
	images = calloc(n ? n : 1, sizeof(*images));
	tables = calloc(n ? n : 1, sizeof(*tables));
	r = -ENOMEM;
	if (!images || !tables)
		goto fail;
	bool added = false;
	uint32_t next = 0;
	for (uint32_t i = 0; i < n; i++) {
		plan_file_image(buf, i, &images[i]);
		if (replan && plan_replan_apply(replan, &images[i]))
			added = true;
		if (images[i].record.symbol_count)
			continue; /* a process merged it after an earlier pass */
		const struct found_image *f = find_found(found, &images[i].record, &next);
		if (f) {
			attach(&images[i], &f->tables);
		} else {
			/* Merged since the symbols were found: looked up now. */
			if (!sym) {
				if (!(sym = symbolizer_new())) {
					r = -ENOMEM;
					goto fail;
				}
				symbolizer_set_budget(sym, PLAN_SYMBOLIZE_BUDGET_S);
			}
			r = symbolize_image(&images[i], sym, &tables[i]);
			if (r < 0)
				goto fail;
			attach(&images[i], &tables[i]);
		}
		added |= images[i].record.symbol_count != 0;
	}
	r = added ? plan_file_write(path, images, n, record_id) : 0;
	if (r == 0)
		goto out;
fail:
	snprintf(why, why_len, "cannot store its symbols%s: %s", replan ? " and new plan" : "",
		 strerror(-r));
out:
	for (uint32_t i = 0; tables && i < n; i++)
		tables_free(&tables[i]);
	free(tables);
	free(images);
	if (buf)
		plan_file_unmap((void *)buf, len);
	close(lock_fd);
	symbolizer_free(sym);
	return r;
}
