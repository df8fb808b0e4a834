/* Plan file v3: round trip (with and without symbols), and the reader on
 * truncated, bit-flipped, foreign, old- and future-version and structurally
 * hostile input (with a valid checksum, so the structural checks themselves are
 * what is tested). Hostile entries are encoded by the test itself and handed to
 * the writer as an already encoded image, which it writes without checking
 * them, as it does for images it read. And replay's way of reading a plan:
 * a record at a time. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "check.h"
#include "entry_codec.h"
#include "plan_file.h"

static const char strings[] = "/usr/lib/libfoo.so\0/bin/prog\0prog\0-x\0";
static struct plan_module modules[2];
static struct plan_frame frames[3] = {{0, 0, 0x1234}, {1, 0, 0x99}, {0, 0, 0x4321}};
static struct plan_site sites[2] = {
    {.key = 0xaaaa, .first_entry = 0, .entry_count = 2, .first_frame = 0, .frame_count = 2},
    {.key = 0xbbbb, .first_entry = 2, .entry_count = 1, .first_frame = 2, .frame_count = 1},
};
static struct plan_entry entries[3] = {
    {.site = 0,
     .occurrence = 0,
     .size_bytes = 100,
     .offset_bytes = 0,
     .t_start = 0,
     .t_end = 3,
     .align_bytes = 16},
    {.site = 0,
     .occurrence = 1,
     .size_bytes = 64,
     .offset_bytes = 128,
     .t_start = 1,
     .t_end = PLAN_T_INFINITY,
     .align_bytes = 64},
    {.site = 1,
     .occurrence = 0,
     .size_bytes = 10,
     .offset_bytes = 0,
     .t_start = 4,
     .t_end = 5,
     .align_bytes = 1},
};

static struct plan_image make_image(void)
{
	struct plan_image im = {0};

	modules[0] = (struct plan_module){.key = 1,
					  .path_offset = 0,
					  .path_bytes = 18,
					  .build_id_bytes = 3,
					  .build_id = {1, 2, 3}};
	modules[1] = (struct plan_module){.key = 2, .path_offset = 19, .path_bytes = 9};
	im.record = (struct plan_image_record){
	    .exe_key = 7,
	    .args_key = 8,
	    .arena_bytes = 192,
	    .lower_bound_bytes = 164,
	    .alloc_calls = 5,
	    .entry_count = 3,
	    .pid = 42,
	    .depth = 4,
	    .module_count = 2,
	    .site_count = 2,
	    .frame_count = 3,
	    .exe_path_offset = 19,
	    .exe_path_bytes = 9,
	    .args_offset = 29,
	    .args_bytes = 8,
	    .strings_bytes = sizeof(strings),
	};
	im.strings = strings;
	im.modules = modules;
	im.sites = sites;
	im.frames = frames;
	im.entries = entries;
	return im;
}

static void reseal(void *buf, size_t len)
{
	struct plan_file_header *h = buf;
	h->checksum = XXH3_64bits((char *)buf + 32, len - 32);
}

static int validate(const void *buf, size_t len)
{
	char why[256] = "";
	/* Copy into an aligned buffer of exactly len bytes, as a mapping would be. */
	void *copy = aligned_alloc(8, (len + 7) / 8 * 8 + 8);
	int r;

	memcpy(copy, buf, len);
	r = plan_file_validate(copy, len, why, sizeof(why));
	CHECK(r == 0 || why[0]); /* every failure says why */
	CHECK(!strchr(why, '\n'));
	free(copy);
	return r;
}

static struct plan_image_record *record_of(char *buf)
{
	return (struct plan_image_record *)(buf + sizeof(struct plan_file_header));
}

/* Serialises the image with entries e, encoded here (one block per site: the sites
 * have fewer than PLAN_BLOCK_ENTRIES entries), so the writer does not check them. */
static void serialize_raw(const struct plan_entry *e, void **buf, size_t *len)
{
	static uint8_t encoded[3 * ENTRY_CODEC_MAX_BYTES];
	static uint64_t blocks[3];
	struct plan_image im = make_image();
	int64_t n0 = entry_codec_encode(e, 2, encoded);
	int64_t n1 = entry_codec_encode(e + 2, 1, encoded + n0);

	CHECK(n0 > 0 && n1 > 0);
	blocks[0] = 0;
	blocks[1] = (uint64_t)n0;
	blocks[2] = (uint64_t)(n0 + n1);
	for (int k = 0; k < 3; k++) {
		unsigned c = plan_size_class(e[k].size_bytes);
		im.record.size_classes[c / 64] |= UINT64_C(1) << (c % 64);
	}
	im.entries = NULL;
	im.blocks = blocks;
	im.encoded_entries = encoded;
	im.record.entries_bytes = blocks[2];
	CHECK(plan_file_serialize(&im, 1, 99, buf, len) == 0);
}

/* Serialises with hostile entries, or applies a mutation to the file's tables;
 * reseals; validates. */
static int validate_mutated(void (*mutate_entries)(struct plan_entry *),
			    void (*mutate_file)(char *buf))
{
	struct plan_entry e[3];
	void *buf;
	size_t len;
	int r;

	memcpy(e, entries, sizeof(e));
	if (mutate_entries)
		mutate_entries(e);
	serialize_raw(e, &buf, &len);
	if (mutate_file)
		mutate_file(buf);
	reseal(buf, len);
	r = validate(buf, len);
	free(buf);
	return r;
}

static void entry_outside_arena(struct plan_entry *e)
{
	e[1].offset_bytes = 192; /* aligned, but 192 + 64 > 192 */
}

static void entry_huge_offset(struct plan_entry *e)
{
	e[0].offset_bytes = UINT64_MAX - 15; /* wraps if added naively */
}

static void entry_misaligned(struct plan_entry *e)
{
	e[1].offset_bytes = 96; /* 16-aligned, not 64 */
}

static void entry_too_aligned(struct plan_entry *e)
{
	e[1].align_bytes = PLAN_MAX_ALIGN_BYTES * 2;
}

static void entry_bad_link(struct plan_entry *e)
{
	e[2].in_place_of = 4; /* there are 3 entries */
}

static void empty_lifetime(struct plan_entry *e)
{
	e[2].t_end = e[2].t_start;
}

static void blocks_out_of_order(char *buf)
{
	uint64_t *blocks = (uint64_t *)(buf + record_of(buf)->blocks_offset);
	blocks[1] = blocks[2] + 1;
}

static void block_boundary_moved(char *buf)
{
	((uint64_t *)(buf + record_of(buf)->blocks_offset))[1]--;
}

static void entries_bytes_short(char *buf)
{
	record_of(buf)->entries_bytes--;
}

static void entry_reserved_flag(char *buf)
{
	buf[record_of(buf)->entries_offset + 4] |= 0x40; /* past the widths: a flags byte */
}

static void size_classes_missing(char *buf)
{
	memset(record_of(buf)->size_classes, 0, sizeof(record_of(buf)->size_classes));
}

/* Validates the tables only (as replay does at start-up). */
static int validate_tables_mutated(void (*mutate_file)(char *buf))
{
	char why[256] = "";
	void *buf;
	size_t len;
	int r;

	serialize_raw(entries, &buf, &len);
	mutate_file(buf);
	reseal(buf, len);
	r = plan_file_validate_tables(buf, len, why, sizeof(why), NULL);
	free(buf);
	return r;
}

static void frame_bad_module(char *buf)
{
	((struct plan_frame *)(buf + record_of(buf)->frames_offset))[2].module = 2;
}

static void site_overlapping_ranges(char *buf)
{
	((struct plan_site *)(buf + record_of(buf)->sites_offset))[1].first_entry = 1;
}

static void table_out_of_file(char *buf)
{
	record_of(buf)->entries_offset = 1u << 30;
}

static void count_overflow(char *buf)
{
	record_of(buf)->entry_count = UINT64_MAX / 8;
}

/* The arguments to the string table's last byte, with no NUL after them:
 * `show --json` and `diff` read each argument as a string, and went past the
 * plan. */
static void args_without_nul(char *buf)
{
	struct plan_image_record *r = record_of(buf);
	buf[r->strings_offset + r->strings_bytes - 1] = 'x';
	r->args_bytes = (uint32_t)(r->strings_bytes - r->args_offset);
}

static void path_without_nul(char *buf)
{
	((struct plan_module *)(buf + record_of(buf)->modules_offset))[0].path_bytes = 19;
}

/* An empty executable path whose offset lies past the string table: read as
 * a string there, it took `memplan diff` past the plan. */
static void empty_exe_path_outside(char *buf)
{
	record_of(buf)->exe_path_bytes = 0;
	record_of(buf)->exe_path_offset = 1u << 30;
}

/* Symbols: frame 0 has two (a helper inlined into its caller), frame 1 none,
 * frame 2 one with no file; their strings follow the image's own. */
static const char symbol_strings[] =
    "/usr/lib/libfoo.so\0/bin/prog\0prog\0-x\0helper\0foo.c\0caller\0run\0";
static const struct plan_symbol symbols[3] = {
    {.function = 37, .file = 44, .line = 12, .flags = PLAN_SYMBOL_INLINED},
    {.function = 50, .file = 44, .line = 40},
    {.function = 57, .file = PLAN_NO_STRING, .line = 0},
};
static const uint32_t frame_symbols[4] = {0, 2, 2, 3};

static struct plan_image make_symbolized_image(void)
{
	struct plan_image im = make_image();

	im.strings = symbol_strings;
	im.record.strings_bytes = sizeof(symbol_strings);
	im.record.symbol_count = 3;
	im.symbols = symbols;
	im.frame_symbols = frame_symbols;
	return im;
}

static void check_symbols(const struct plan_image *back)
{
	CHECK_EQ_U64(back->record.symbol_count, 3);
	CHECK(memcmp(back->symbols, symbols, sizeof(symbols)) == 0);
	CHECK(memcmp(back->frame_symbols, frame_symbols, sizeof(frame_symbols)) == 0);
	CHECK(strcmp(back->strings + back->symbols[0].function, "helper") == 0);
	CHECK(strcmp(back->strings + back->symbols[1].file, "foo.c") == 0);
}

/* Each of the n mutations of the plan buf (len bytes), resealed, is refused. */
static void check_refused(const void *buf, size_t len, void (*const *hostile)(char *), size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char *copy = malloc(len);
		memcpy(copy, buf, len);
		hostile[i](copy);
		reseal(copy, len);
		CHECK(validate(copy, len) == -EINVAL);
		free(copy);
	}
}

static void symbol_string_outside(char *buf)
{
	((struct plan_symbol *)(buf + record_of(buf)->symbols_offset))[2].function =
	    sizeof(symbol_strings);
}

static void frame_symbols_descending(char *buf)
{
	((uint32_t *)(buf + record_of(buf)->frame_symbols_offset))[1] = 3;
	((uint32_t *)(buf + record_of(buf)->frame_symbols_offset))[2] = 1;
}

static void symbol_unknown_flag(char *buf)
{
	((struct plan_symbol *)(buf + record_of(buf)->symbols_offset))[0].flags = 2;
}

/* A symbolised image round trip: serialised, written to a file, and written
 * again as the reader gives it back (as a merge or a re-plan does); the
 * reader refuses symbols that point outside their tables. */
static void test_symbols(void)
{
	struct plan_image im = make_symbolized_image(), back;
	void (*const hostile[])(char *) = {symbol_string_outside, frame_symbols_descending,
					   symbol_unknown_flag};
	char path[] = "/tmp/test-plan-file-XXXXXX";
	char why[256];
	void *buf, *again, *loaded;
	size_t len, again_len, loaded_len;

	CHECK(plan_file_serialize(&im, 1, 7, &buf, &len) == 0);
	CHECK(validate(buf, len) == 0);
	plan_file_image(buf, 0, &back);
	check_symbols(&back);
	CHECK(plan_file_serialize(&back, 1, 7, &again, &again_len) == 0);
	CHECK(again_len == len && memcmp(again, buf, len) == 0);

	int fd = mkstemp(path);
	CHECK(fd >= 0);
	close(fd);
	CHECK(plan_file_write(path, &back, 1, 7) == 0);
	CHECK(plan_file_load(path, &loaded, &loaded_len, why, sizeof(why)) == 0);
	CHECK(loaded_len == len && memcmp(loaded, buf, len) == 0);
	unlink(path);

	check_refused(buf, len, hostile, sizeof(hostile) / sizeof(hostile[0]));
	free(loaded);
	free(again);
	free(buf);
}

/* Frame sizes: one plain, one varying, one outermost, of both modules. */
static const struct plan_frame_size frame_sizes[3] = {
    {.offset = 0x10, .module = 0, .bytes = 48},
    {.offset = 0x20, .module = 0, .bytes = PLAN_FRAME_VARIES},
    {.offset = 0x8, .module = 1, .bytes = PLAN_FRAME_OUTERMOST},
};

static struct plan_frame_size *frame_sizes_of(char *buf)
{
	return (struct plan_frame_size *)(buf + record_of(buf)->frame_sizes_offset);
}

static void frame_size_bad_module(char *buf)
{
	frame_sizes_of(buf)[2].module = 2;
}

static void frame_sizes_descending(char *buf)
{
	frame_sizes_of(buf)[1].offset = 0x8;
}

static void frame_size_twice(char *buf)
{
	frame_sizes_of(buf)[1].offset = 0x10;
}

static void frame_size_zero(char *buf)
{
	frame_sizes_of(buf)[0].bytes = 0;
}

static void frame_size_unaligned(char *buf)
{
	frame_sizes_of(buf)[0].bytes = 44;
}

static void frame_size_huge(char *buf)
{
	frame_sizes_of(buf)[0].bytes = PLAN_FRAME_BYTES_MAX;
}

static void frame_sizes_past_the_file(char *buf)
{
	record_of(buf)->frame_size_count = UINT32_MAX;
}

static void image_reserved_set(char *buf)
{
	record_of(buf)->reserved = 1;
}

/* Frame sizes round trip, also as the reader gives them back (a merge, a
 * re-plan); the reader refuses any that replay could not trust the format of. */
static void test_frame_sizes(void)
{
	struct plan_image im = make_image(), back;
	void (*const hostile[])(char *) = {frame_size_bad_module, frame_sizes_descending,
					   frame_size_twice,	  frame_size_zero,
					   frame_size_unaligned,  frame_size_huge,
					   frame_sizes_past_the_file, image_reserved_set};
	void *buf, *again;
	size_t len, again_len;

	im.frame_sizes = frame_sizes;
	im.record.frame_size_count = 3;
	CHECK(plan_file_serialize(&im, 1, 7, &buf, &len) == 0);
	CHECK(validate(buf, len) == 0);
	plan_file_image(buf, 0, &back);
	CHECK_EQ_U64(back.record.frame_size_count, 3);
	CHECK(memcmp(back.frame_sizes, frame_sizes, sizeof(frame_sizes)) == 0);
	CHECK(plan_file_serialize(&back, 1, 7, &again, &again_len) == 0);
	CHECK(again_len == len && memcmp(again, buf, len) == 0);
	free(again);
	check_refused(buf, len, hostile, sizeof(hostile) / sizeof(hostile[0]));
	/* The writer refuses what the reader would. */
	struct plan_frame_size unsorted[2] = {frame_sizes[1], frame_sizes[0]};
	im.frame_sizes = unsorted;
	im.record.frame_size_count = 2;
	CHECK(plan_file_serialize(&im, 1, 7, &again, &again_len) == -EINVAL);
	free(buf);
}

/* Replay's reading: the index holds the header only; records come one at a
 * time (plan_file_read_records, or into the buffer with the image's tables),
 * so a plan of many images costs a process none of the others' records. */
static void test_read_as_replay(void)
{
	enum { IMAGES = 40 }; /* 12,160 bytes of records: three pages and more */
	struct plan_image ims[IMAGES];
	struct plan_image_record rec[IMAGES];
	char why[256];
	void *buf, *index;
	size_t len;
	int fd = memfd_create("plan", 0);

	for (uint32_t i = 0; i < IMAGES; i++) {
		ims[i] = make_image();
		ims[i].record.exe_key = 1000 + i;
		ims[i].record.args_key = 2000 + i;
	}
	CHECK(fd >= 0);
	CHECK(plan_file_serialize(ims, IMAGES, 5, &buf, &len) == 0);
	CHECK(pwrite(fd, buf, len, 0) == (ssize_t)len);
	CHECK(plan_file_read_index(fd, len, true, &index, why, sizeof(why)) == 0);
	const struct plan_file_header *h = plan_file_header(index);
	CHECK_EQ_U64(h->image_count, IMAGES);
	/* Not one record read: they are zero, and stay so. */
	static const struct plan_image_record zero;
	for (uint32_t i = 0; i < IMAGES; i++)
		CHECK(memcmp((char *)index + h->images_offset + i * sizeof(zero), &zero,
			     sizeof(zero)) == 0);
	CHECK(plan_file_read_records(fd, index, 0, IMAGES, rec) == 0);
	for (uint32_t i = 0; i < IMAGES; i++) {
		CHECK_EQ_U64(rec[i].exe_key, 1000 + i);
		CHECK_EQ_U64(rec[i].args_key, 2000 + i);
	}
	CHECK(plan_file_read_records(fd, index, IMAGES - 1, 1, rec) == 0);
	CHECK_EQ_U64(rec[0].exe_key, 1000 + IMAGES - 1);
	CHECK(plan_file_read_records(fd, index, IMAGES - 1, 2, rec) == -EINVAL);
	CHECK(plan_file_read_records(fd, index, IMAGES + 1, 0, rec) == -EINVAL);
	/* The arguments of one, where its record says, into memory of the
	 * caller's, whole or cut. */
	char args[16];
	uint32_t args_bytes, span_bytes;
	uint64_t at;
	CHECK(plan_file_read_records(fd, index, 9, 1, rec) == 0);
	CHECK(plan_file_args_span(rec, 9, len, &at, &span_bytes, why, sizeof(why)) == 0);
	CHECK_EQ_U64(span_bytes, 8);
	CHECK(plan_file_read_args(fd, at, span_bytes, args, sizeof(args), &args_bytes, why,
				  sizeof(why)) == 0);
	CHECK_EQ_U64(args_bytes, 8);
	CHECK(memcmp(args, "prog\0-x\0", 8) == 0);
	CHECK(plan_file_read_args(fd, at, span_bytes, args, 3, &args_bytes, why, sizeof(why)) == 0);
	CHECK_EQ_U64(args_bytes, 3);
	CHECK(memcmp(args, "pro", 3) == 0);
	/* Past the end of the file: cut short. */
	CHECK(plan_file_read_args(fd, len - 2, 8, args, sizeof(args), &args_bytes, why,
				  sizeof(why)) == -EIO);
	/* A record whose arguments run past its strings is refused, and one whose
	 * strings run past the file. */
	struct plan_image_record hostile = rec[0];
	hostile.args_bytes = (uint32_t)hostile.strings_bytes;
	CHECK(plan_file_args_span(&hostile, 5, len, &at, &span_bytes, why, sizeof(why)) == -EINVAL);
	CHECK(strstr(why, "image 5: arguments out of bounds") != NULL);
	hostile = rec[0];
	hostile.args_offset = (uint32_t)hostile.strings_bytes + 1;
	hostile.args_bytes = 1;
	CHECK(plan_file_args_span(&hostile, 5, len, &at, &span_bytes, why, sizeof(why)) == -EINVAL);
	hostile = rec[0];
	hostile.strings_offset = len;
	CHECK(plan_file_args_span(&hostile, 5, len, &at, &span_bytes, why, sizeof(why)) == -EINVAL);
	CHECK(strstr(why, "table out of bounds") != NULL);
	/* One image read in full, as replay sets it up. */
	struct plan_image back;
	CHECK(plan_file_read_image(fd, index, len, 17, why, sizeof(why)) == 0);
	plan_file_image(index, 17, &back);
	CHECK_EQ_U64(back.record.exe_key, 1017);
	CHECK(strcmp(back.strings + back.record.exe_path_offset, "/bin/prog") == 0);
	CHECK(memcmp(back.sites, sites, sizeof(sites)) == 0);
	for (uint32_t i = 0; i < IMAGES; i++)
		if (i != 17)
			CHECK(memcmp((char *)index + h->images_offset + i * sizeof(zero), &zero,
				     sizeof(zero)) == 0);
	CHECK(plan_file_read_image(fd, index, len, IMAGES, why, sizeof(why)) == -EINVAL);
	/* A file cut short after the index was read: an error, not a crash. */
	CHECK(ftruncate(fd, (off_t)(h->images_offset + 3 * sizeof(zero))) == 0);
	CHECK(plan_file_read_records(fd, index, 0, IMAGES, rec) == -EIO);
	CHECK(plan_file_read_image(fd, index, len, 30, why, sizeof(why)) < 0);
	CHECK(why[0] && !strchr(why, '\n'));
	plan_file_unmap(index, len);
	free(buf);
	close(fd);
}

int main(void)
{
	struct plan_image im = make_image(), back;
	void *buf;
	size_t len;

	/* Round trip. */
	CHECK(plan_file_serialize(&im, 1, 99, &buf, &len) == 0);
	CHECK(validate(buf, len) == 0);
	CHECK_EQ_U64(plan_file_header(buf)->record_id, 99);
	CHECK_EQ_U64(plan_file_header(buf)->image_count, 1);
	plan_file_image(buf, 0, &back);
	CHECK_EQ_U64(back.record.entry_count, 3);
	CHECK_EQ_U64(back.record.pid, 42);
	CHECK(back.entries == NULL);
	struct plan_entry *decoded;
	CHECK(plan_image_entries(&back, &decoded) == 0);
	CHECK(memcmp(decoded, entries, sizeof(entries)) == 0);
	free(decoded);
	CHECK(memcmp(back.sites, sites, sizeof(sites)) == 0);
	CHECK(memcmp(back.frames, frames, sizeof(frames)) == 0);
	CHECK(strcmp(plan_image_module_path(&back, 0), "/usr/lib/libfoo.so") == 0);
	CHECK(strcmp(back.strings + back.record.exe_path_offset, "/bin/prog") == 0);

	/* Every truncation is rejected. */
	for (size_t cut = 0; cut < len; cut++)
		CHECK(validate(buf, cut) < 0);

	/* Every single-bit flip is rejected (header fields or checksum). */
	for (size_t byte = 0; byte < len; byte++) {
		for (int bit = 0; bit < 8; bit++) {
			((unsigned char *)buf)[byte] ^= (unsigned char)(1u << bit);
			CHECK(validate(buf, len) < 0);
			((unsigned char *)buf)[byte] ^= (unsigned char)(1u << bit);
		}
	}
	CHECK(validate(buf, len) == 0);

	/* Foreign and future files. */
	char *copy = malloc(len);
	memcpy(copy, buf, len);
	memcpy(copy, "NOTAPLAN", 8);
	CHECK(validate(copy, len) == -EPROTO);
	memcpy(copy, buf, len);
	((struct plan_file_header *)copy)->version = PLAN_FILE_VERSION + 1;
	reseal(copy, len);
	CHECK(validate(copy, len) == -ENOTSUP);
	((struct plan_file_header *)copy)->version = 1; /* the fixed-size entries of old */
	reseal(copy, len);
	CHECK(validate(copy, len) == -EINVAL);
	free(copy);
	free(buf);

	/* Structurally hostile files with valid checksums. */
	CHECK(validate_mutated(NULL, NULL) == 0); /* the raw path itself is sound */
	CHECK(validate_mutated(entry_outside_arena, NULL) == -EINVAL);
	CHECK(validate_mutated(entry_huge_offset, NULL) == -EINVAL);
	CHECK(validate_mutated(entry_misaligned, NULL) == -EINVAL);
	CHECK(validate_mutated(entry_too_aligned, NULL) == -EINVAL);
	CHECK(validate_mutated(entry_bad_link, NULL) == -EINVAL);
	CHECK(validate_mutated(empty_lifetime, NULL) == -EINVAL);
	CHECK(validate_mutated(NULL, blocks_out_of_order) == -EINVAL);
	CHECK(validate_mutated(NULL, block_boundary_moved) == -EINVAL);
	CHECK(validate_mutated(NULL, entries_bytes_short) == -EINVAL);
	CHECK(validate_mutated(NULL, entry_reserved_flag) == -EINVAL);
	CHECK(validate_mutated(NULL, frame_bad_module) == -EINVAL);
	CHECK(validate_mutated(NULL, site_overlapping_ranges) == -EINVAL);
	CHECK(validate_mutated(NULL, table_out_of_file) == -EINVAL);
	CHECK(validate_mutated(NULL, count_overflow) == -EINVAL);
	CHECK(validate_mutated(NULL, path_without_nul) == -EINVAL);
	CHECK(validate_mutated(NULL, args_without_nul) == -EINVAL);
	CHECK(validate_mutated(NULL, empty_exe_path_outside) == -EINVAL);
	CHECK(validate_mutated(NULL, size_classes_missing) == -EINVAL);

	/* Replay's start-up check leaves the entries to be checked as they are read,
	 * but not the tables around them. */
	CHECK(validate_tables_mutated(entry_reserved_flag) == 0);
	CHECK(validate_tables_mutated(blocks_out_of_order) == -EINVAL);
	CHECK(validate_tables_mutated(frame_bad_module) == -EINVAL);

	/* The writer refuses what the reader would refuse. */
	entries[1].offset_bytes = 192;
	CHECK(plan_file_serialize(&im, 1, 99, &buf, &len) == -EINVAL);
	entries[1].offset_bytes = 128;

	test_symbols();
	test_frame_sizes();
	test_read_as_replay();
	return 0;
}
