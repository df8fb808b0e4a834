/* Plan file v3: validation, serialisation, loading. See plan_file.h for the layout.
 * The validator is the only gate between a hostile file and the replay hot path,
 * so it checks every count, index and offset with overflow-safe arithmetic. */
#include "plan_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "atomic_file.h"
#include "entry_codec.h"
#include "file_io.h"
#include "hash64.h"

#define CHECKSUM_START offsetof(struct plan_file_header, record_id)

static int fail(char *why, size_t why_len, int err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail(char *why, size_t why_len, int err, const char *fmt, ...)
{
	va_list ap;

	if (why && why_len) {
		va_start(ap, fmt);
		vsnprintf(why, why_len, fmt, ap);
		va_end(ap);
	}
	return err;
}

/* Validation reads the buffer once, in chunks of this size, in file order: each
 * chunk is hashed and the entries it completes are checked while it is in cache,
 * then the chunk can be reported done (see plan_file_validate_streaming). */
#define STREAM_CHUNK_BYTES (1u << 20)

/* True if [offset, offset + count * size) lies inside [0, len) and offset is
 * 8-byte aligned, without overflow. */
static bool table_fits(uint64_t offset, uint64_t count, uint64_t size, uint64_t len)
{
	if (offset % 8 || offset > len)
		return false;
	if (count && size > (len - offset) / count)
		return false;
	return count * size <= len - offset;
}

static bool string_fits(uint64_t offset, uint64_t bytes, const char *strings,
			uint64_t strings_bytes)
{
	/* Each string is followed by a NUL inside the table, so C code can use it. */
	return offset < strings_bytes && bytes < strings_bytes - offset &&
	       strings[offset + bytes] == '\0';
}

static bool is_power_of_two(uint64_t v)
{
	return v && !(v & (v - 1));
}

/* Whether a string starts at offset of the table and ends inside it. */
static bool string_at(uint32_t offset, const char *strings, uint64_t strings_bytes)
{
	return offset < strings_bytes &&
	       memchr(strings + offset, '\0', (size_t)(strings_bytes - offset)) != NULL;
}

/* Each site's pools, in site order, sorted by slot size; each pool's chunks, in
 * pool order, adding up to its slots, inside the arena, every slot aligned:
 * what replay relies on to serve a slot without further checks. */
static int pools_validate(const struct plan_image *im, uint32_t index, char *why, size_t why_len)
{
	const struct plan_image_record *r = &im->record;
	uint64_t expected = 0, expected_chunk = 0;

	for (uint32_t s = 0; s < r->site_count; s++) {
		const struct plan_site *site = &im->sites[s];
		if (site->first_pool != expected || site->pool_count > r->pool_count - expected)
			return fail(why, why_len, -EINVAL,
				    "image %u: site %u pools out of order or bounds", index, s);
		expected += site->pool_count;
	}
	if (expected != r->pool_count)
		return fail(why, why_len, -EINVAL, "image %u: sites cover %llu of %u pools", index,
			    (unsigned long long)expected, r->pool_count);
	for (uint32_t s = 0; s < r->site_count; s++) {
		const struct plan_site *site = &im->sites[s];
		for (uint32_t i = site->first_pool; i < site->first_pool + site->pool_count; i++) {
			const struct plan_pool *p = &im->pools[i];
			uint64_t align = p->align_bytes, slots = 0;
			if (p->site != s || !p->slot_bytes || p->slot_bytes % PLAN_GRANULE_BYTES ||
			    !is_power_of_two(align) || align > PLAN_MAX_ALIGN_BYTES ||
			    p->slot_bytes % align || p->first_chunk != expected_chunk ||
			    p->chunk_count > r->chunk_count - expected_chunk)
				return fail(why, why_len, -EINVAL, "image %u: pool %u is malformed",
					    index, i);
			if (i > site->first_pool && p->slot_bytes < im->pools[i - 1].slot_bytes)
				return fail(why, why_len, -EINVAL,
					    "image %u: pools of site %u out of order", index, s);
			for (uint32_t k = p->first_chunk; k < p->first_chunk + p->chunk_count; k++) {
				const struct plan_chunk *c = &im->chunks[k];
				if (c->pool != i || !c->slot_count ||
				    c->offset_bytes % PLAN_GRANULE_BYTES || c->offset_bytes % align)
					return fail(why, why_len, -EINVAL,
						    "image %u: chunk %u is malformed", index, k);
				if (c->offset_bytes > r->arena_bytes ||
				    p->slot_bytes > (r->arena_bytes - c->offset_bytes) / c->slot_count)
					return fail(why, why_len, -EINVAL,
						    "image %u: chunk %u lies outside the arena",
						    index, k);
				slots += c->slot_count;
			}
			if (slots != p->slot_count)
				return fail(why, why_len, -EINVAL,
					    "image %u: pool %u has %llu slots in chunks, not %u",
					    index, i, (unsigned long long)slots, p->slot_count);
			expected_chunk += p->chunk_count;
		}
	}
	if (expected_chunk != r->chunk_count)
		return fail(why, why_len, -EINVAL, "image %u: pools cover %llu of %u chunks", index,
			    (unsigned long long)expected_chunk, r->chunk_count);
	return 0;
}

/* The frames' symbols, if any: each frame's run inside the table, in frame
 * order, each name a string of the image. */
static int symbols_validate(const struct plan_image *im, uint32_t index, char *why,
			    size_t why_len)
{
	const struct plan_image_record *r = &im->record;

	if (!r->symbol_count)
		return 0;
	if (im->frame_symbols[0] != 0 || im->frame_symbols[r->frame_count] != r->symbol_count)
		return fail(why, why_len, -EINVAL, "image %u: frame symbols out of bounds", index);
	for (uint32_t f = 0; f < r->frame_count; f++)
		if (im->frame_symbols[f] > im->frame_symbols[f + 1])
			return fail(why, why_len, -EINVAL,
				    "image %u: frame symbols out of order", index);
	for (uint32_t k = 0; k < r->symbol_count; k++) {
		const struct plan_symbol *y = &im->symbols[k];
		if ((y->function != PLAN_NO_STRING &&
		     !string_at(y->function, im->strings, r->strings_bytes)) ||
		    (y->file != PLAN_NO_STRING &&
		     !string_at(y->file, im->strings, r->strings_bytes)) ||
		    (y->flags & ~PLAN_SYMBOL_INLINED))
			return fail(why, why_len, -EINVAL, "image %u: symbol %u is malformed",
				    index, k);
	}
	return 0;
}

/* The frame sizes: each of a module of the image, sorted by module and offset,
 * each once, each size plausible or one of the marks. */
static int frame_sizes_validate(const struct plan_image *im, uint32_t index, char *why,
				size_t why_len)
{
	const struct plan_image_record *r = &im->record;

	if (r->reserved)
		return fail(why, why_len, -EINVAL, "image %u: reserved field set", index);
	for (uint32_t k = 0; k < r->frame_size_count; k++) {
		const struct plan_frame_size *f = &im->frame_sizes[k], *prev = f - 1;
		bool marked = f->bytes == PLAN_FRAME_OUTERMOST || f->bytes == PLAN_FRAME_VARIES;
		if (f->module >= r->module_count ||
		    (!marked && (!f->bytes || f->bytes % 8 || f->bytes >= PLAN_FRAME_BYTES_MAX)))
			return fail(why, why_len, -EINVAL, "image %u: frame size %u is malformed",
				    index, k);
		if (k && (f->module < prev->module ||
			  (f->module == prev->module && f->offset <= prev->offset)))
			return fail(why, why_len, -EINVAL, "image %u: frame sizes out of order",
				    index);
	}
	return 0;
}

/* Whether an image's arguments lie inside its string table. */
static bool args_fit(const struct plan_image_record *r)
{
	return !r->args_bytes || (r->args_offset <= r->strings_bytes &&
				  r->args_bytes <= r->strings_bytes - r->args_offset);
}

/* Checks one image's tables except its entries and their blocks. */
static int image_validate_tables(const struct plan_image *im, uint32_t index, bool symbols,
				 char *why, size_t why_len)
{
	const struct plan_image_record *r = &im->record;
	uint64_t expected_entry = 0;

	/* An empty path too: readers take the table at its offset as a string. */
	if (!string_fits(r->exe_path_offset, r->exe_path_bytes, im->strings, r->strings_bytes))
		return fail(why, why_len, -EINVAL, "image %u: executable path out of bounds",
			    index);
	/* And the last one ends in a NUL, its own or, for a list cut short, the
	 * one the writer puts after it: readers take each argument as a string. */
	if (!args_fit(r) ||
	    (r->args_bytes && im->strings[r->args_offset + r->args_bytes - 1] != '\0' &&
	     !string_fits(r->args_offset, r->args_bytes, im->strings, r->strings_bytes)))
		return fail(why, why_len, -EINVAL, "image %u: arguments out of bounds", index);
	if (r->depth == 0 || r->depth > PLAN_MAX_DEPTH)
		return fail(why, why_len, -EINVAL, "image %u: call-site depth %u out of range",
			    index, r->depth);
	if (r->arena_bytes > (UINT64_C(1) << 48))
		return fail(why, why_len, -EINVAL, "image %u: arena of %llu bytes is implausible",
			    index, (unsigned long long)r->arena_bytes);

	for (uint32_t m = 0; m < r->module_count; m++) {
		const struct plan_module *mod = &im->modules[m];
		if (mod->build_id_bytes > PLAN_BUILD_ID_MAX ||
		    !string_fits(mod->path_offset, mod->path_bytes, im->strings, r->strings_bytes))
			return fail(why, why_len, -EINVAL, "image %u: module %u is malformed",
				    index, m);
	}
	for (uint32_t f = 0; f < r->frame_count; f++)
		if (im->frames[f].module >= r->module_count)
			return fail(why, why_len, -EINVAL,
				    "image %u: frame %u names module %u of %u", index, f,
				    im->frames[f].module, r->module_count);
	for (uint32_t s = 0; s < r->site_count; s++) {
		const struct plan_site *site = &im->sites[s];
		if (site->first_frame > r->frame_count ||
		    site->frame_count > r->frame_count - site->first_frame)
			return fail(why, why_len, -EINVAL, "image %u: site %u frames out of bounds",
				    index, s);
		/* Sites own consecutive runs of entries, in site order: this is what lets
		 * replay index entries[first_entry + occurrence] without a search. */
		if (site->first_entry != expected_entry || site->entry_count > r->entry_count ||
		    site->first_entry > r->entry_count - site->entry_count ||
		    site->tail_entries > site->entry_count)
			return fail(why, why_len, -EINVAL,
				    "image %u: site %u entries out of order or bounds", index, s);
		expected_entry += site->entry_count;
	}
	if (expected_entry != r->entry_count)
		return fail(why, why_len, -EINVAL, "image %u: sites cover %llu of %llu entries",
			    index, (unsigned long long)expected_entry,
			    (unsigned long long)r->entry_count);
	int err = pools_validate(im, index, why, why_len);
	if (err == 0 && symbols)
		err = symbols_validate(im, index, why, why_len);
	if (err == 0)
		err = frame_sizes_validate(im, index, why, why_len);
	return err;
}

static bool has_size_class(const struct plan_image_record *r, uint64_t size)
{
	unsigned c = plan_size_class(size);

	return r->size_classes[c / 64] >> (c % 64) & 1;
}

/* Checks entry i of an image (occurrence k of site s): what replay relies on. */
static int entry_validate(const struct plan_image_record *r, uint32_t index, uint32_t s, uint64_t k,
			  uint64_t i, const struct plan_entry *e, char *why, size_t why_len)
{
	if (e->site != s || e->occurrence != k)
		return fail(why, why_len, -EINVAL,
			    "image %u: entry %llu is not occurrence %llu of site %u", index,
			    (unsigned long long)i, (unsigned long long)k, s);
	/* A power of two, so the mask is the remainder. */
	if (!is_power_of_two(e->align_bytes) || e->align_bytes > PLAN_MAX_ALIGN_BYTES ||
	    e->offset_bytes % PLAN_GRANULE_BYTES || (e->offset_bytes & (e->align_bytes - 1)))
		return fail(why, why_len, -EINVAL, "image %u: entry %llu is misaligned", index,
			    (unsigned long long)i);
	if (e->offset_bytes > r->arena_bytes || e->size_bytes > r->arena_bytes - e->offset_bytes)
		return fail(why, why_len, -EINVAL, "image %u: entry %llu lies outside the arena",
			    index, (unsigned long long)i);
	/* Only bounds: following the link would touch the file at random (and replay
	 * never follows it); re-planning checks the rest. */
	if (e->in_place_of > r->entry_count || e->in_place_of == i + 1)
		return fail(why, why_len, -EINVAL,
			    "image %u: entry %llu continues an invalid entry", index,
			    (unsigned long long)i);
	if (e->t_end <= e->t_start)
		return fail(why, why_len, -EINVAL, "image %u: entry %llu has an empty lifetime",
			    index, (unsigned long long)i);
	if (e->flags)
		return fail(why, why_len, -EINVAL, "image %u: entry %llu has reserved flags set",
			    index, (unsigned long long)i);
	if (!has_size_class(r, e->size_bytes))
		return fail(why, why_len, -EINVAL,
			    "image %u: entry %llu has a size the image does not list", index,
			    (unsigned long long)i);
	return 0;
}

/* The writer's check of an image it is given: its tables, and its entries if it
 * has them decoded (an image straight from the reader was checked there). */
static int image_validate(const struct plan_image *im, uint32_t index, char *why, size_t why_len)
{
	const struct plan_image_record *r = &im->record;
	int err = image_validate_tables(im, index, true, why, why_len);

	if (err < 0 || !im->entries)
		return err;
	for (uint32_t s = 0; s < r->site_count; s++) {
		const struct plan_site *site = &im->sites[s];
		for (uint64_t k = 0; k < site->entry_count; k++) {
			uint64_t i = site->first_entry + k;
			err = entry_validate(r, index, s, k, i, &im->entries[i], why, why_len);
			if (err < 0)
				return err;
		}
	}
	return 0;
}

/* The number of entry blocks of an image whose sites passed image_validate_tables
 * (at most entry_count + site_count, so it does not overflow). */
static uint64_t image_block_count(const struct plan_image *im)
{
	uint64_t blocks = 0;

	for (uint32_t s = 0; s < im->record.site_count; s++)
		blocks += plan_site_blocks(im->sites[s].entry_count);
	return blocks;
}

const struct plan_file_header *plan_file_header(const void *buf)
{
	return buf;
}

void plan_file_image(const void *buf, uint32_t i, struct plan_image *image)
{
	const struct plan_file_header *h = buf;
	const char *base = buf;
	const struct plan_image_record *r =
	    (const void *)(base + h->images_offset + (uint64_t)i * h->image_record_bytes);

	memcpy(&image->record, r, sizeof(*r));
	image->strings = base + r->strings_offset;
	image->modules = (const void *)(base + r->modules_offset);
	image->sites = (const void *)(base + r->sites_offset);
	image->frames = (const void *)(base + r->frames_offset);
	image->pools = (const void *)(base + r->pools_offset);
	image->chunks = (const void *)(base + r->chunks_offset);
	image->symbols = r->symbol_count ? (const void *)(base + r->symbols_offset) : NULL;
	image->frame_symbols =
	    r->symbol_count ? (const void *)(base + r->frame_symbols_offset) : NULL;
	image->frame_sizes = (const void *)(base + r->frame_sizes_offset);
	image->entries = NULL;
	image->blocks = (const void *)(base + r->blocks_offset);
	image->encoded_entries = (const void *)(base + r->entries_offset);
}

bool plan_image_exe_by_path(const struct plan_image *image)
{
	const struct plan_image_record *r = &image->record;

	/* The preload library keys the main module so (modules.c). */
	return r->exe_key == hash64(image->strings + r->exe_path_offset, r->exe_path_bytes, 0);
}

/* Decodes block k of site s of an image from the reader into out; returns the
 * number of entries or -EINVAL. */
static int64_t decode_block(const struct plan_image *im, uint32_t s, uint64_t block, uint64_t k,
			    struct plan_entry *out)
{
	const struct plan_site *site = &im->sites[s];
	uint64_t first = k * PLAN_BLOCK_ENTRIES, n = site->entry_count - first;
	const uint64_t *b = im->blocks;

	if (n > PLAN_BLOCK_ENTRIES)
		n = PLAN_BLOCK_ENTRIES;
	if (entry_codec_decode(im->encoded_entries + b[block], b[block + 1] - b[block], (uint32_t)n,
			       s, first, out) < 0)
		return -EINVAL;
	return (int64_t)n;
}

int plan_image_entries(const struct plan_image *im, struct plan_entry **out)
{
	uint64_t block = 0;
	struct plan_entry *all =
	    malloc((im->record.entry_count ? im->record.entry_count : 1) * sizeof(*all));

	if (!all)
		return -ENOMEM;
	for (uint32_t s = 0; s < im->record.site_count; s++) {
		const struct plan_site *site = &im->sites[s];
		for (uint64_t k = 0; k < plan_site_blocks(site->entry_count); k++)
			decode_block(im, s, block++, k,
				     all + site->first_entry + k * PLAN_BLOCK_ENTRIES);
	}
	*out = all;
	return 0;
}

static int validate(const void *buf, size_t len, char *why, size_t why_len,
		    const struct plan_file_stream *stream, bool entries);

int plan_file_validate(const void *buf, size_t len, char *why, size_t why_len)
{
	return validate(buf, len, why, why_len, NULL, true);
}

int plan_file_validate_streaming(const void *buf, size_t len, char *why, size_t why_len,
				 const struct plan_file_stream *stream)
{
	return validate(buf, len, why, why_len, stream, true);
}

int plan_file_validate_tables(const void *buf, size_t len, char *why, size_t why_len,
			      const struct plan_file_stream *stream)
{
	return validate(buf, len, why, why_len, stream, false);
}

/* The block table: block_count + 1 offsets, rising, from 0 to entries_bytes. */
static bool blocks_fit(const struct plan_image *im, uint64_t block_count)
{
	const uint64_t *b = im->blocks;

	if (b[0] != 0 || b[block_count] != im->record.entries_bytes)
		return false;
	for (uint64_t k = 0; k < block_count; k++)
		if (b[k] > b[k + 1])
			return false;
	return true;
}

/* Image i's tables, each inside the file and each checked (its symbols only
 * if symbols: they may not have been read), but its entries. The image table
 * fits the buffer. */
static int image_tables_validate(const void *buf, size_t len, uint32_t i, bool symbols, char *why,
				 size_t why_len)
{
	const struct plan_file_header *h = buf;
	const struct plan_image_record *rec =
	    (const void *)((const char *)buf + h->images_offset +
			   (uint64_t)i * sizeof(struct plan_image_record));
	struct plan_image im;
	int r;

	if (!table_fits(rec->strings_offset, rec->strings_bytes, 1, len) ||
	    !table_fits(rec->modules_offset, rec->module_count, sizeof(struct plan_module), len) ||
	    !table_fits(rec->sites_offset, rec->site_count, sizeof(struct plan_site), len) ||
	    !table_fits(rec->frames_offset, rec->frame_count, sizeof(struct plan_frame), len) ||
	    !table_fits(rec->pools_offset, rec->pool_count, sizeof(struct plan_pool), len) ||
	    !table_fits(rec->chunks_offset, rec->chunk_count, sizeof(struct plan_chunk), len) ||
	    (rec->symbol_count &&
	     (!table_fits(rec->symbols_offset, rec->symbol_count, sizeof(struct plan_symbol),
			  len) ||
	      !table_fits(rec->frame_symbols_offset, (uint64_t)rec->frame_count + 1,
			  sizeof(uint32_t), len))) ||
	    !table_fits(rec->frame_sizes_offset, rec->frame_size_count,
			sizeof(struct plan_frame_size), len) ||
	    !table_fits(rec->entries_offset, rec->entries_bytes, 1, len) ||
	    /* Its length needs the sites, checked below; its start, now. */
	    !table_fits(rec->blocks_offset, 0, sizeof(uint64_t), len))
		return fail(why, why_len, -EINVAL, "image %u: table out of bounds", i);
	plan_file_image(buf, i, &im);
	r = image_validate_tables(&im, i, symbols, why, why_len);
	if (r < 0)
		return r;
	uint64_t blocks = image_block_count(&im);
	if (blocks == UINT64_MAX ||
	    !table_fits(rec->blocks_offset, blocks + 1, sizeof(uint64_t), len) ||
	    !blocks_fit(&im, blocks))
		return fail(why, why_len, -EINVAL, "image %u: entry blocks out of bounds", i);
	return 0;
}

/* Everything but the header fields and the entries: the image table, each image's
 * tables inside the file, and each image's tables but its entries. */
static int tables_validate(const void *buf, size_t len, char *why, size_t why_len)
{
	const struct plan_file_header *h = buf;

	if (!table_fits(h->images_offset, h->image_count, sizeof(struct plan_image_record), len))
		return fail(why, why_len, -EINVAL, "image table out of bounds");
	for (uint32_t i = 0; i < h->image_count; i++) {
		int r = image_tables_validate(buf, len, i, true, why, why_len);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Where the entry check has got to: image (and its tables, so that the header need
 * not be read again), its next block, and that block's site and place in it. */
struct entry_cursor {
	uint32_t image_count;
	uint32_t image;
	uint32_t site;
	uint64_t block;	 /* in the image */
	uint64_t k;	 /* the block's number within its site */
	uint64_t blocks; /* the image's */
	struct plan_image im;
};

/* Moves the cursor to the first block of site s or a later one, or past the end of
 * the image. */
static void cursor_site(struct entry_cursor *c, uint32_t s)
{
	while (s < c->im.record.site_count && !c->im.sites[s].entry_count)
		s++;
	c->site = s;
	c->k = 0;
}

static void cursor_start(const void *buf, struct entry_cursor *c, uint32_t image)
{
	c->image_count = plan_file_header(buf)->image_count;
	c->image = image;
	c->block = 0;
	if (image < c->image_count) {
		plan_file_image(buf, image, &c->im);
		c->blocks = image_block_count(&c->im);
		cursor_site(c, 0);
	}
}

/* The file offset just past the next block to check, or 0 when all are checked. */
static uint64_t cursor_next_end(const struct entry_cursor *c)
{
	if (c->image >= c->image_count)
		return 0;
	return c->im.record.entries_offset + c->im.blocks[c->block + 1];
}

/* Decodes and checks the blocks that lie wholly below read_end and have not been
 * checked yet, image by image. Returns 0 or the first failure. */
static int entries_advance(const void *buf, size_t read_end, struct entry_cursor *c, char *why,
			   size_t why_len, const struct plan_file_stream *stream)
{
	struct plan_entry decoded[PLAN_BLOCK_ENTRIES];
	int err;

	while (c->image < c->image_count) {
		if (c->block == c->blocks) {
			cursor_start(buf, c, c->image + 1);
			continue;
		}
		if (cursor_next_end(c) > read_end)
			return 0; /* not read that far yet */
		const struct plan_site *site = &c->im.sites[c->site];
		int64_t n = decode_block(&c->im, c->site, c->block, c->k, decoded);
		if (n < 0)
			return fail(why, why_len, -EINVAL,
				    "image %u: entries of site %u are malformed (block %llu)",
				    c->image, c->site, (unsigned long long)c->k);
		for (int64_t j = 0; j < n; j++) {
			uint64_t occurrence = c->k * PLAN_BLOCK_ENTRIES + (uint64_t)j;
			err = entry_validate(&c->im.record, c->image, c->site, occurrence,
					     site->first_entry + occurrence, &decoded[j], why,
					     why_len);
			if (err < 0)
				return err;
		}
		if (stream && stream->entries)
			stream->entries(c->image, decoded, (uint64_t)n, stream->ctx);
		c->block++;
		if (++c->k == plan_site_blocks(site->entry_count))
			cursor_site(c, c->site + 1);
	}
	return 0;
}

/* The header's own checks: what a buffer of len bytes must start with. */
static int header_validate(const struct plan_file_header *h, uint64_t len, char *why,
			   size_t why_len)
{
	if (len == 0)
		return fail(why, why_len, -EPROTO, "empty file, not a plan");
	if (len < sizeof(*h))
		return fail(why, why_len, -EPROTO, "too short to be a plan (%llu bytes)",
			    (unsigned long long)len);
	if (memcmp(h->magic, PLAN_FILE_MAGIC, sizeof(h->magic)) != 0)
		return fail(why, why_len, -EPROTO, "not a memplan plan file (bad magic)");
	if (h->version > PLAN_FILE_VERSION)
		return fail(why, why_len, -ENOTSUP,
			    "plan format version %u is newer than this memplan (%u)", h->version,
			    PLAN_FILE_VERSION);
	if (h->version != PLAN_FILE_VERSION)
		return fail(why, why_len, -EINVAL,
			    "plan format version %u is no longer read (this memplan reads %u); "
			    "record again",
			    h->version, PLAN_FILE_VERSION);
	if (h->file_bytes != len)
		return fail(
		    why, why_len, -EINVAL,
		    "truncated, padded or corrupt: its header says %llu bytes, the file has %llu",
		    (unsigned long long)h->file_bytes, (unsigned long long)len);
	if (h->header_bytes != sizeof(*h) ||
	    h->image_record_bytes != sizeof(struct plan_image_record))
		return fail(why, why_len, -EINVAL, "unexpected record sizes");
	return 0;
}

/* Validation reads the buffer in one pass: the small tables first, then every
 * chunk in file order, hashing it and decoding and checking the entry blocks it
 * completes while they are in cache. A failure of the checksum wins over any
 * other, as a corrupt file is best reported as such, so the hashing goes on to the
 * end after a failure. */
static int validate(const void *buf, size_t len, char *why, size_t why_len,
		    const struct plan_file_stream *stream, bool entries)
{
	const struct plan_file_header *h = buf;
	struct entry_cursor cursor = {0};
	struct hash64_stream state;
	size_t done_end = 0;
	int r;

	if ((uintptr_t)buf % 8)
		return fail(why, why_len, -EINVAL, "buffer is not 8-byte aligned");
	r = header_validate(h, len, why, why_len);
	if (r < 0)
		return r;
	r = tables_validate(buf, len, why, why_len);
	if (r == 0 && entries)
		cursor_start(buf, &cursor, 0);
	hash64_begin(&state);
	for (size_t at = CHECKSUM_START; at < len;) {
		size_t n = len - at < STREAM_CHUNK_BYTES ? len - at : STREAM_CHUNK_BYTES;
		hash64_add(&state, (const char *)buf + at, n);
		at += n;
		if (r == 0)
			r = entries_advance(buf, at, &cursor, why, why_len, stream);
		if (!stream || !stream->done)
			continue;
		/* Done up to the next block still to check, if that is in what was read. */
		size_t safe_end = at;
		if (r == 0 && cursor.image < cursor.image_count) {
			uint64_t next =
			    cursor.im.record.entries_offset + cursor.im.blocks[cursor.block];
			if (next < safe_end)
				safe_end = (size_t)next;
		}
		if (safe_end > done_end) {
			stream->done((const char *)buf + done_end, safe_end - done_end,
				     stream->ctx);
			done_end = safe_end;
		}
	}
	if (hash64_end(&state) != h->checksum)
		return fail(why, why_len, -EINVAL, "checksum mismatch (corrupt file)");
	return r;
}

static uint64_t align8(uint64_t v)
{
	return (v + 7) & ~UINT64_C(7);
}

/* A plan file as a list of pieces in file order: the header, the image records,
 * then each image's tables with zero padding to 8 bytes. Serialising copies the
 * pieces into one buffer; writing hands them to the file as they are, so a big
 * plan is never copied whole. Entries given decoded are encoded into buffers of
 * the layout's own. */
struct layout {
	struct plan_file_header header;
	struct plan_image_record *records;
	uint64_t **blocks; /* per image, if encoded here */
	uint8_t **encoded; /* per image, if encoded here */
	uint32_t image_count;
	struct iovec *pieces;
	int piece_count;
	uint64_t total_bytes;
};

static const char zero_padding[8];

static void add_piece(struct layout *l, const void *data, uint64_t bytes)
{
	if (!bytes)
		return;
	l->pieces[l->piece_count].iov_base = (void *)data;
	l->pieces[l->piece_count].iov_len = (size_t)bytes;
	l->piece_count++;
	l->total_bytes += bytes;
}

/* Adds a table and its padding; returns the table's offset in the file. */
static uint64_t add_table(struct layout *l, const void *data, uint64_t bytes)
{
	uint64_t at = l->total_bytes;

	add_piece(l, data, bytes);
	add_piece(l, zero_padding, align8(l->total_bytes) - l->total_bytes);
	return at;
}

static void layout_free(struct layout *l)
{
	for (uint32_t i = 0; l->blocks && i < l->image_count; i++) {
		free(l->blocks[i]);
		free(l->encoded[i]);
	}
	free(l->blocks);
	free(l->encoded);
	free(l->records);
	free(l->pieces);
}

void plan_size_classes_add_pools(uint64_t *classes, const struct plan_pool *pools, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		unsigned top = plan_size_class(pools[i].slot_bytes);
		for (unsigned c = 1; c <= top; c++)
			classes[c / 64] |= UINT64_C(1) << (c % 64);
	}
}

/* Sets image->record.size_classes from its (decoded) entries and its pools. */
static void list_size_classes(struct plan_image *image)
{
	memset(image->record.size_classes, 0, sizeof(image->record.size_classes));
	for (uint64_t i = 0; i < image->record.entry_count; i++) {
		unsigned c = plan_size_class(image->entries[i].size_bytes);
		image->record.size_classes[c / 64] |= UINT64_C(1) << (c % 64);
	}
	plan_size_classes_add_pools(image->record.size_classes, image->pools,
				    image->record.pool_count);
}

/* Encodes an image's decoded entries, site by site, a block at a time, into
 * *blocks_out (block_count + 1 offsets) and *encoded_out; returns the encoded size
 * or a negative errno. */
static int64_t encode_entries(const struct plan_image *im, uint64_t **blocks_out,
			      uint8_t **encoded_out)
{
	uint64_t block_count = image_block_count(im), block = 0, at = 0;
	uint64_t *blocks = malloc((block_count + 1) * sizeof(*blocks));
	/* Room for the worst case; only what is written gets touched. */
	uint8_t *encoded = malloc(im->record.entry_count * ENTRY_CODEC_MAX_BYTES + 1);

	*blocks_out = blocks;
	*encoded_out = encoded;
	if (!blocks || !encoded)
		return -ENOMEM;
	for (uint32_t s = 0; s < im->record.site_count; s++) {
		const struct plan_site *site = &im->sites[s];
		for (uint64_t first = 0; first < site->entry_count; first += PLAN_BLOCK_ENTRIES) {
			uint64_t n = site->entry_count - first;
			if (n > PLAN_BLOCK_ENTRIES)
				n = PLAN_BLOCK_ENTRIES;
			blocks[block++] = at;
			int64_t bytes = entry_codec_encode(im->entries + site->first_entry + first,
							   (uint32_t)n, encoded + at);
			if (bytes < 0)
				return bytes;
			at += (uint64_t)bytes;
		}
	}
	blocks[block] = at;
	return (int64_t)at;
}

static int layout_build(struct layout *l, const struct plan_image *images, uint32_t image_count,
			uint64_t record_id)
{
	struct plan_file_header *h = &l->header;
	int r;

	memset(l, 0, sizeof(*l));
	l->image_count = image_count;
	l->records = calloc(image_count ? image_count : 1, sizeof(*l->records));
	l->blocks = calloc(image_count ? image_count : 1, sizeof(*l->blocks));
	l->encoded = calloc(image_count ? image_count : 1, sizeof(*l->encoded));
	l->pieces = calloc(2 + 24 * (size_t)image_count, sizeof(*l->pieces));
	if (!l->records || !l->blocks || !l->encoded || !l->pieces) {
		layout_free(l);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < image_count; i++) {
		struct plan_image im = images[i];
		/* Size classes come from the entries; an image from the reader has them. */
		if (im.entries)
			list_size_classes(&im);
		r = image_validate(&im, i, NULL, 0);
		if (r < 0) {
			layout_free(l);
			return r;
		}
		l->records[i] = im.record;
	}
	memcpy(h->magic, PLAN_FILE_MAGIC, sizeof(h->magic));
	h->version = PLAN_FILE_VERSION;
	h->header_bytes = sizeof(*h);
	h->record_id = record_id;
	h->image_count = image_count;
	h->image_record_bytes = sizeof(struct plan_image_record);
	add_piece(l, h, sizeof(*h));
	h->images_offset = add_table(l, l->records, (uint64_t)image_count * sizeof(*l->records));
	for (uint32_t i = 0; i < image_count; i++) {
		const struct plan_image *im = &images[i];
		struct plan_image_record *rec = &l->records[i];
		const uint64_t *blocks = im->blocks;
		const uint8_t *encoded = im->encoded_entries;

		if (im->entries) {
			int64_t bytes = encode_entries(im, &l->blocks[i], &l->encoded[i]);
			if (bytes < 0) {
				layout_free(l);
				return (int)bytes;
			}
			rec->entries_bytes = (uint64_t)bytes;
			blocks = l->blocks[i];
			encoded = l->encoded[i];
		}
		rec->strings_offset = add_table(l, im->strings, rec->strings_bytes);
		rec->modules_offset =
		    add_table(l, im->modules, rec->module_count * sizeof(struct plan_module));
		rec->sites_offset =
		    add_table(l, im->sites, rec->site_count * sizeof(struct plan_site));
		rec->frames_offset =
		    add_table(l, im->frames, rec->frame_count * sizeof(struct plan_frame));
		rec->pools_offset =
		    add_table(l, im->pools, rec->pool_count * sizeof(struct plan_pool));
		rec->chunks_offset =
		    add_table(l, im->chunks, rec->chunk_count * sizeof(struct plan_chunk));
		rec->symbols_offset = rec->frame_symbols_offset = 0;
		if (rec->symbol_count) {
			rec->symbols_offset = add_table(
			    l, im->symbols, rec->symbol_count * sizeof(struct plan_symbol));
			rec->frame_symbols_offset =
			    add_table(l, im->frame_symbols,
				      ((uint64_t)rec->frame_count + 1) * sizeof(uint32_t));
		}
		rec->frame_sizes_offset = add_table(
		    l, im->frame_sizes, rec->frame_size_count * sizeof(struct plan_frame_size));
		rec->blocks_offset =
		    add_table(l, blocks, (image_block_count(im) + 1) * sizeof(uint64_t));
		rec->entries_offset = add_table(l, encoded, rec->entries_bytes);
	}
	h->file_bytes = l->total_bytes;

	/* The checksum covers everything after its own field, streamed over the pieces
	 * (the header is the first piece). */
	struct hash64_stream state;
	hash64_begin(&state);
	hash64_add(&state, (const char *)h + CHECKSUM_START, sizeof(*h) - CHECKSUM_START);
	for (int k = 1; k < l->piece_count; k++)
		hash64_add(&state, l->pieces[k].iov_base, l->pieces[k].iov_len);
	h->checksum = hash64_end(&state);
	return 0;
}

int plan_file_serialize(const struct plan_image *images, uint32_t image_count, uint64_t record_id,
			void **out, size_t *out_len)
{
	struct layout l;
	char *buf;
	int r;

	r = layout_build(&l, images, image_count, record_id);
	if (r < 0)
		return r;
	buf = l.total_bytes <= SIZE_MAX ? malloc((size_t)l.total_bytes) : NULL;
	if (!buf) {
		layout_free(&l);
		return -ENOMEM;
	}
	size_t pos = 0;
	for (int k = 0; k < l.piece_count; k++) {
		memcpy(buf + pos, l.pieces[k].iov_base, l.pieces[k].iov_len);
		pos += l.pieces[k].iov_len;
	}
	*out = buf;
	*out_len = (size_t)l.total_bytes;
	layout_free(&l);
	return 0;
}

int plan_file_write(const char *path, const struct plan_image *images, uint32_t image_count,
		    uint64_t record_id)
{
	struct layout l;
	int r;

	r = layout_build(&l, images, image_count, record_id);
	if (r < 0)
		return r;
	r = atomic_file_writev(path, l.pieces, l.piece_count);
	layout_free(&l);
	return r;
}

/* Reads exactly bytes at offset of fd into dst. Returns 0, or -EIO if the file
 * ends first (it was cut short since it was opened), or a negative errno. */
static int pread_all(int fd, void *dst, uint64_t bytes, uint64_t offset)
{
	char *p = dst;

	while (bytes) {
		ssize_t n = pread(fd, p, bytes, (off_t)offset);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		bytes -= (uint64_t)n;
		offset += (uint64_t)n;
	}
	return 0;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

/* Reads count records of size bytes at offset into buf at the same offset, if
 * they lie inside it: tables that do not are left for validation to report.
 * buf is a fresh anonymous mapping (plan_file_read_index): the pages a table
 * fills wholly are mapped first in one call, not faulted in one by one as the
 * read copies into them (in a virtual machine here a fault took 10 us, and a
 * replayed perl's start-up took 22 of them so). Only a hint, errno kept. */
static int read_table(int fd, char *buf, uint64_t len, uint64_t offset, uint64_t count,
		      uint64_t size)
{
	if (!table_fits(offset, count, size, len))
		return 0;
	const uintptr_t page = 4096, from = ((uintptr_t)buf + offset + page - 1) & ~(page - 1),
			to = ((uintptr_t)buf + offset + count * size) & ~(page - 1);
	if (to > from + page) {
		const int saved_errno = errno;
		(void)madvise((void *)from, to - from, MADV_POPULATE_WRITE);
		errno = saved_errno;
	}
	return pread_all(fd, buf + offset, count * size, offset);
}

/* Reads the tables of the image whose record is rec (its symbols too, if
 * symbols) into buf (len bytes, the file's size), each at its own offset, as
 * far as the record says where they are. */
static int read_image_tables(int fd, char *buf, uint64_t len, const struct plan_image_record *rec,
			     bool symbols)
{
	uint64_t blocks = 0;
	int r;

	if ((r = read_table(fd, buf, len, rec->strings_offset, rec->strings_bytes, 1)) < 0 ||
	    (r = read_table(fd, buf, len, rec->modules_offset, rec->module_count,
			    sizeof(struct plan_module))) < 0 ||
	    (r = read_table(fd, buf, len, rec->frames_offset, rec->frame_count,
			    sizeof(struct plan_frame))) < 0 ||
	    (r = read_table(fd, buf, len, rec->pools_offset, rec->pool_count,
			    sizeof(struct plan_pool))) < 0 ||
	    (r = read_table(fd, buf, len, rec->chunks_offset, rec->chunk_count,
			    sizeof(struct plan_chunk))) < 0 ||
	    (symbols && rec->symbol_count &&
	     ((r = read_table(fd, buf, len, rec->symbols_offset, rec->symbol_count,
			      sizeof(struct plan_symbol))) < 0 ||
	      (r = read_table(fd, buf, len, rec->frame_symbols_offset,
			      (uint64_t)rec->frame_count + 1, sizeof(uint32_t))) < 0)) ||
	    (r = read_table(fd, buf, len, rec->frame_sizes_offset, rec->frame_size_count,
			    sizeof(struct plan_frame_size))) < 0 ||
	    (r = read_table(fd, buf, len, rec->sites_offset, rec->site_count,
			    sizeof(struct plan_site))) < 0)
		return r;
	if (!table_fits(rec->sites_offset, rec->site_count, sizeof(struct plan_site), len))
		return 0;
	/* The block table's length comes from the sites just read; a sum that
	 * cannot fit the file is left for validation to refuse. */
	const struct plan_site *sites = (const void *)(buf + rec->sites_offset);
	for (uint32_t s = 0; s < rec->site_count && blocks <= len; s++)
		blocks +=
		    plan_site_blocks(sites[s].entry_count > len ? len + 1 : sites[s].entry_count);
	if (blocks <= len)
		r = read_table(fd, buf, len, rec->blocks_offset, blocks + 1, sizeof(uint64_t));
	return r;
}

/* The record of image i of buf, whose image table was read. */
static const struct plan_image_record *image_record(const char *buf, uint32_t i)
{
	const struct plan_file_header *h = (const void *)buf;

	return (const void *)(buf + h->images_offset +
			      (uint64_t)i * sizeof(struct plan_image_record));
}

/* Says why a read of the plan failed, and returns r. */
static int read_failed(char *why, size_t why_len, int r)
{
	return fail(why, why_len, r, "cannot read: %s",
		    r == -EIO ? "the file was cut short" : strerror(-r));
}

/* The checksum of the file open at fd, of len bytes, read in chunks. The
 * chunk is a mapping of its own, unmapped after: from malloc, in a replayed
 * process's start-up, it would stay in libc's heap, resident for the whole
 * run. */
static int hash_file(int fd, uint64_t len, uint64_t *hash)
{
	enum { CHUNK = 64 * 1024 };
	char *chunk = mmap(NULL, CHUNK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct hash64_stream state;
	int r = 0;

	if (chunk == MAP_FAILED)
		return -ENOMEM;
	hash64_begin(&state);
	for (uint64_t at = CHECKSUM_START; r == 0 && at < len;) {
		uint64_t n = len - at < CHUNK ? len - at : CHUNK;
		r = pread_all(fd, chunk, n, at);
		hash64_add(&state, chunk, (size_t)n);
		at += n;
	}
	munmap(chunk, CHUNK);
	*hash = hash64_end(&state);
	return r;
}

int plan_file_read_index(int fd, uint64_t len, bool verify, void **out, char *why,
			 size_t why_len)
{
	struct plan_file_header *h;
	uint64_t hash;
	char *buf;
	int r;

	if (len < sizeof(*h))
		return header_validate((const void *)"", len, why, why_len);
	if (len > SIZE_MAX / 2)
		return fail(why, why_len, -EFBIG, "implausibly large (%llu bytes)",
			    (unsigned long long)len);
	/* Zero pages until written: the pages of tables never read cost nothing. */
	buf = mmap(NULL, (size_t)len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (buf == MAP_FAILED)
		return fail(why, why_len, -ENOMEM, "cannot map %llu bytes",
			    (unsigned long long)len);
	h = (struct plan_file_header *)buf;
	r = pread_all(fd, h, sizeof(*h), 0);
	if (r == 0)
		r = header_validate(h, len, why, why_len);
	else
		read_failed(why, why_len, r);
	if (r == 0 &&
	    !table_fits(h->images_offset, h->image_count, sizeof(struct plan_image_record), len))
		r = fail(why, why_len, -EINVAL, "image table out of bounds");
	if (r == 0 && verify && (r = hash_file(fd, len, &hash)) < 0)
		read_failed(why, why_len, r);
	if (r == 0 && verify && hash != h->checksum)
		r = fail(why, why_len, -EINVAL, "checksum mismatch (corrupt file)");
	if (r < 0) {
		munmap(buf, (size_t)len);
		return r;
	}
	*out = buf;
	return 0;
}

int plan_file_read_records(int fd, const void *buf, uint32_t first, uint32_t count,
			   struct plan_image_record *out)
{
	const struct plan_file_header *h = buf;

	if (first > h->image_count || count > h->image_count - first)
		return -EINVAL;
	return pread_all(fd, out, (uint64_t)count * sizeof(*out),
			 h->images_offset + (uint64_t)first * sizeof(*out));
}

/* Reads the record of image i into buf, at its offset. */
static int read_record(int fd, char *buf, uint32_t i, char *why, size_t why_len)
{
	const struct plan_file_header *h = (const void *)buf;
	int r;

	if (i >= h->image_count)
		return fail(why, why_len, -EINVAL, "image %u: no such image", i);
	r = pread_all(fd, (void *)image_record(buf, i), sizeof(struct plan_image_record),
		      h->images_offset + (uint64_t)i * sizeof(struct plan_image_record));
	return r < 0 ? read_failed(why, why_len, r) : 0;
}

int plan_file_args_span(const struct plan_image_record *rec, uint32_t i, uint64_t len, uint64_t *at,
			uint32_t *bytes, char *why, size_t why_len)
{
	if (!table_fits(rec->strings_offset, rec->strings_bytes, 1, len))
		return fail(why, why_len, -EINVAL, "image %u: table out of bounds", i);
	if (!args_fit(rec))
		return fail(why, why_len, -EINVAL, "image %u: arguments out of bounds", i);
	*at = rec->strings_offset + rec->args_offset;
	*bytes = rec->args_bytes;
	return 0;
}

int plan_file_read_args(int fd, uint64_t at, uint32_t bytes, char *args, uint32_t cap,
			uint32_t *got, char *why, size_t why_len)
{
	*got = bytes < cap ? bytes : cap;
	int r = pread_all(fd, args, *got, at);
	return r < 0 ? read_failed(why, why_len, r) : 0;
}

int plan_file_read_image(int fd, void *buf, uint64_t len, uint32_t i, char *why, size_t why_len)
{
	int r = read_record(fd, buf, i, why, why_len);

	if (r < 0)
		return r;
	r = read_image_tables(fd, buf, len, image_record(buf, i), false);

	if (r < 0)
		return read_failed(why, why_len, r);
	return image_tables_validate(buf, (size_t)len, i, false, why, why_len);
}

void plan_file_unmap(void *buf, uint64_t len)
{
	if (buf)
		munmap(buf, (size_t)len);
}

/* Gives back the pages of a mapped plan from its start up to the end of the
 * region just checked: they are read again from the page cache if needed. Not
 * just the region itself: a fault may map a whole large folio of the page
 * cache, reaching back over pages given back before. */
static void give_back(const void *start, size_t bytes, void *ctx)
{
	const char *map = ctx;
	uintptr_t end = ((uintptr_t)start + bytes) & ~(uintptr_t)4095;

	if (end > (uintptr_t)map)
		madvise((void *)map, end - (uintptr_t)map, MADV_DONTNEED);
}

int plan_file_map(const char *path, const void **out, size_t *out_len, char *why, size_t why_len)
{
	struct stat st;
	void *map;
	int fd, r;

	fd = file_open_regular(path, &st);
	if (fd < 0)
		return fail(why, why_len, fd, "%s",
			    fd == -EINVAL ? "not a regular file" : strerror(-fd));
	if (st.st_size == 0) {
		close(fd);
		return header_validate(NULL, 0, why, why_len);
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	r = map == MAP_FAILED ? -errno : 0;
	close(fd);
	if (r < 0)
		return fail(why, why_len, r, "cannot map: %s", strerror(-r));
	const struct plan_file_stream stream = {give_back, NULL, map};
	r = plan_file_validate_streaming(map, (size_t)st.st_size, why, why_len, &stream);
	if (r < 0) {
		munmap(map, (size_t)st.st_size);
		return r;
	}
	*out = map;
	*out_len = (size_t)st.st_size;
	return 0;
}

uint64_t plan_file_peek_record_id(const char *path)
{
	struct plan_file_header h;
	struct stat st;
	ssize_t n = -1;
	int fd = file_open_regular(path, &st);

	if (fd >= 0) {
		n = read(fd, &h, sizeof(h));
		close(fd);
	}
	if (n != (ssize_t)sizeof(h) || memcmp(h.magic, PLAN_FILE_MAGIC, sizeof(h.magic)) != 0)
		return 0;
	return h.record_id;
}

bool plan_file_may_replace(const char *path)
{
	char head[sizeof(PLAN_FILE_MAGIC) - 1];
	struct stat st;
	ssize_t n;
	int fd = file_open_regular(path, &st);

	if (fd < 0)
		return true; /* none, or no regular file: writing it says why */
	n = read(fd, head, sizeof(head));
	close(fd);
	return n >= 0 && memcmp(head, PLAN_FILE_MAGIC, (size_t)n) == 0;
}

bool plan_file_starts_as_plan(const char *path)
{
	char head[sizeof(PLAN_FILE_MAGIC) - 1];
	struct stat st;
	int fd = file_open_regular(path, &st);

	if (fd < 0)
		return false;
	const ssize_t n = read(fd, head, sizeof(head));
	close(fd);
	return n == (ssize_t)sizeof(head) && memcmp(head, PLAN_FILE_MAGIC, sizeof(head)) == 0;
}

int plan_file_load(const char *path, void **out, size_t *out_len, char *why, size_t why_len)
{
	struct stat st;
	char *buf = NULL;
	size_t got = 0;
	int fd, r;

	fd = file_open_regular(path, &st);
	if (fd < 0)
		return fail(why, why_len, fd, "%s",
			    fd == -EINVAL ? "not a regular file" : strerror(-fd));
	/* malloc's alignment (16) satisfies the reader's 8-byte requirement. */
	buf = malloc(st.st_size ? (size_t)st.st_size : 1);
	if (!buf) {
		r = fail(why, why_len, -ENOMEM, "out of memory");
		goto err_close;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			r = fail(why, why_len, n < 0 ? -errno : -EIO, "read failed");
			goto err_free;
		}
		got += (size_t)n;
	}
	r = plan_file_validate(buf, got, why, why_len);
	if (r < 0)
		goto err_free;
	close(fd);
	*out = buf;
	*out_len = got;
	return 0;

err_free:
	free(buf);
err_close:
	close(fd);
	return r;
}
