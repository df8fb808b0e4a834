/* The plan file, version 4: the on-disk format and its zero-copy reader and writer.
 *
 * A plan file holds one or more process images. Each image is bound to its
 * executable (exe_key) and arguments (args_key), and holds the modules, the call
 * sites (with their frames, as module + offset, so tools can symbolise them, and
 * the symbols the CLI found for them), the frame sizes the recording's stack
 * walks learned (struct plan_frame_size), and what replay serves: for each site, the
 * exact entries of its first occurrences, and pools of slots for any number of
 * further ones (see struct plan_pool). All integers are little-endian; every
 * table is 8-byte aligned; a 64-bit XXH3 checksum covers everything after the
 * checksum field. docs/plan-format.md describes the layout for other
 * implementations.
 *
 * The fixed-size records below are the on-disk layout itself: the reader validates
 * a buffer once and then hands out pointers into it, so a mapped file is used
 * without copying. Entries are stored compactly instead (entry_codec.h): in blocks
 * of PLAN_BLOCK_ENTRIES occurrences of one site, each decodable on its own, found
 * through a table of block offsets. Validation bounds-checks every count, index
 * and offset and decodes every block; a buffer that passes can be indexed and
 * decoded without further checks. It does not check that entries and pools are
 * free of overlaps: replay enforces that at run time. */
#pragma once

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the plan file is little-endian and this code maps it in place"
#endif

#define PLAN_FILE_MAGIC	  "MEMPLAN\0"
#define PLAN_FILE_VERSION 4
#define PLAN_BUILD_ID_MAX 32
#define PLAN_T_INFINITY	  UINT64_MAX
/* Offsets are multiples of this, and replay tracks occupancy at this granularity. */
#define PLAN_GRANULE_BYTES 16

/* The granules a block of size_bytes covers (no overflow, whatever the size). */
static inline uint64_t plan_granules_of(uint64_t size_bytes)
{
	return size_bytes / PLAN_GRANULE_BYTES + (size_bytes % PLAN_GRANULE_BYTES != 0);
}
/* The most frames a call site has: replay unwinds to the plan's depth, into
 * buffers of this many frames. */
#define PLAN_MAX_DEPTH 64
/* A recording id (MEMPLAN_RECORD_ID) with this bit set is memplan record's: it
 * re-plans the whole file once the command has ended, so its processes skip
 * the planner at their exit, which would only delay them (a 20 ms churn of
 * 300,000 allocations spent 250 ms there). An id the library makes itself (the
 * raw form) has it clear. A bit of the id, not a variable of its own: replay
 * sets the same variables, so that programs that copy their environment
 * allocate alike in both. */
#define PLAN_RECORD_ID_REPLANNED UINT64_C(1)

/* The largest alignment a plan may ask for (replay aligns the arena base to it). */
#define PLAN_MAX_ALIGN_BYTES (1u << 21)

struct plan_file_header {
	char magic[8];
	uint32_t version;
	uint32_t header_bytes;
	uint64_t file_bytes;
	uint64_t checksum;  /* XXH3-64 of bytes [32, file_bytes) */
	uint64_t record_id; /* one id per recording run, shared by all its processes */
	uint32_t image_count;
	uint32_t image_record_bytes;
	uint64_t images_offset;
	uint64_t reserved;
};
static_assert(sizeof(struct plan_file_header) == 64, "header layout");

/* Sizes fall in classes (16-byte steps up to 4 KiB, then four per power of two),
 * and an image lists the classes its entries use, so that replay can send a
 * request of any other size to libc without looking for its call site. */
#define PLAN_SIZE_CLASSES 512

static inline unsigned plan_size_class(uint64_t size)
{
	if (size <= 4096)
		return (unsigned)((size + 15) / 16);
	unsigned e = 63u - (unsigned)__builtin_clzll(size);
	return 257u + (e - 12u) * 4u + (unsigned)((size >> (e - 2)) & 3u);
}

/* The largest size of class c (plan_size_class), in whole granules: the size
 * of a pool slot that serves class c. */
static inline uint64_t plan_class_bytes(unsigned c)
{
	if (c <= 256)
		return (uint64_t)c * 16;
	unsigned e = 12 + (c - 257) / 4, q = (c - 257) % 4;
	return (UINT64_C(1) << e) + (uint64_t)(q + 1) * (UINT64_C(1) << (e - 2));
}

struct plan_image_record {
	uint64_t exe_key;  /* hash of the executable's build-id, or of its path */
	uint64_t args_key; /* hash of argv */
	uint64_t arena_bytes;
	uint64_t lower_bound_bytes;    /* the most bytes (in granules) live at once */
	uint64_t requested_peak_bytes; /* the most bytes requested live at once */
	uint64_t requested_peak_time;  /* when first (the clock's tick) */
	uint64_t alloc_calls;	       /* allocation calls seen while recording */
	uint64_t entry_count;
	uint64_t folded_count; /* allocations recorded into pools, beyond the entries */
	uint32_t pid;
	uint32_t depth; /* call-site depth the sites were recorded with */
	uint32_t module_count;
	uint32_t site_count;
	uint32_t frame_count;
	uint32_t pool_count;
	uint32_t chunk_count;
	uint32_t symbol_count; /* 0: the frames are not symbolised */
	uint32_t flags;	       /* PLAN_IMAGE_* */
	uint32_t exe_path_offset; /* into strings */
	uint32_t exe_path_bytes;
	uint32_t args_offset; /* argv, each argument NUL-terminated */
	uint32_t args_bytes;
	uint32_t fork_ordinal; /* PLAN_IMAGE_FORKED: which fork of its parent (from 1) */
	uint32_t frame_size_count;
	uint32_t reserved; /* 0 */
	uint64_t strings_offset; /* the offsets below are from the start of the file */
	uint64_t strings_bytes;
	uint64_t modules_offset;
	uint64_t sites_offset;
	uint64_t frames_offset;
	uint64_t pools_offset;
	uint64_t chunks_offset;
	uint64_t symbols_offset;       /* symbol_count symbols */
	uint64_t frame_symbols_offset; /* frame_count + 1 symbol indices, if symbol_count */
	uint64_t entries_offset;       /* the encoded entries */
	uint64_t entries_bytes;
	uint64_t blocks_offset; /* block_count + 1 offsets into the encoded entries */
	uint64_t frame_sizes_offset; /* frame_size_count frame sizes */
	uint64_t size_classes[PLAN_SIZE_CLASSES / 64]; /* bit c: replay may serve class c */
};
static_assert(sizeof(struct plan_image_record) == 304, "image record layout");

/* The recording packed each thread's call sites in a region of the arena of their
 * own (recording.h), so that threads interleaving differently when replayed do not
 * find each other's blocks in their planned bytes; re-planning keeps the regions
 * apart (plan_builder.h). Readers that do not know a flag ignore it. */
#define PLAN_IMAGE_THREAD_REGIONS 1u
/* A child forked without exec: its arguments key is its parent's, mixed with
 * which fork of its parent it was. */
#define PLAN_IMAGE_FORKED 2u
/* The frame sizes are complete: every frame but the last of each stack the
 * recording saw has its size or a mark among them (replay may then take a
 * stack that meets a frame of a listed module with no size as one that names
 * no site, without unwinding it). */
#define PLAN_IMAGE_FRAME_SIZES 4u

struct plan_module {
	uint64_t key;	      /* hash of the build-id, or of the path when there is none */
	uint32_t path_offset; /* into strings */
	uint32_t path_bytes;
	uint8_t build_id_bytes; /* 0: no build-id */
	uint8_t reserved[7];
	uint8_t build_id[PLAN_BUILD_ID_MAX];
};
static_assert(sizeof(struct plan_module) == 56, "module layout");

struct plan_frame {
	uint32_t module;
	uint32_t reserved;
	uint64_t offset; /* return address relative to the module's load base */
};
static_assert(sizeof(struct plan_frame) == 16, "frame layout");

/* The size of the frame of the function that a return address returns into,
 * as the recording's stack walks learned it (frame_walk.h): the bytes from the
 * stack pointer at that return address to the caller's. Replay walks stacks
 * from these sizes without unwinding them first, and keeps checking its walks
 * against an unwind now and then. Sorted by module, then offset, each once. */
struct plan_frame_size {
	uint64_t offset; /* return address relative to the module's load base */
	uint32_t module;
	uint32_t bytes; /* a positive multiple of 8 below 2^24, or PLAN_FRAME_* */
};
static_assert(sizeof(struct plan_frame_size) == 16, "frame size layout");
/* The outermost frame: it has no caller. */
#define PLAN_FRAME_OUTERMOST UINT32_MAX
/* Its size varied, or it is no plain call (a signal frame): always unwound. */
#define PLAN_FRAME_VARIES (UINT32_MAX - 1)
/* The largest frame size learned. */
#define PLAN_FRAME_BYTES_MAX (UINT32_C(1) << 24)

/* What the CLI found of a frame's code: its function, and the functions inlined
 * into it there, innermost first; frame f's symbols are symbols[frame_symbols[f],
 * frame_symbols[f + 1]). */
#define PLAN_NO_STRING UINT32_MAX
struct plan_symbol {
	uint32_t function; /* demangled name, into strings; PLAN_NO_STRING if unknown */
	uint32_t file;	   /* source file, into strings; PLAN_NO_STRING if unknown */
	uint32_t line;	   /* 0 if unknown */
	uint32_t flags;	   /* PLAN_SYMBOL_* */
};
static_assert(sizeof(struct plan_symbol) == 16, "symbol layout");
/* Inlined: this function's code was inlined into the next symbol's function. */
#define PLAN_SYMBOL_INLINED 1u

/* A site's entries are entries[first_entry + k] for occurrence k < entry_count,
 * the exact entries of its first occurrences; in the file they are
 * plan_site_blocks(entry_count) blocks, numbered on from the previous sites'.
 * Its pools, pools[first_pool + i], serve the occurrences past those, and any
 * whose entry does not fit; a site with no pools but tail_entries serves them
 * in the places of its last tail_entries entries (a steady loop's last turns,
 * where nothing else lived while it ran). The counts describe the recording,
 * for reports. */
struct plan_site {
	uint64_t key; /* stable hash of the frames */
	uint64_t first_entry;
	uint64_t entry_count;
	uint64_t alloc_count; /* allocations recorded, exact or folded into pools */
	uint64_t total_bytes; /* requested by them */
	uint64_t peak_bytes;  /* bytes requested of it live at the image's requested peak */
	uint32_t peak_blocks; /* its blocks live then */
	uint32_t first_frame;
	uint32_t frame_count;
	uint32_t first_pool;
	uint32_t pool_count;
	uint32_t tail_entries; /* at most entry_count */
};
static_assert(sizeof(struct plan_site) == 72, "site layout");

/* Slots for a site's steady state: slot_count slots of slot_bytes each, in one
 * or more chunks (chunks[first_chunk + i]), any of which may serve any
 * occurrence of the site whose size and alignment fit and whose entry (if it
 * has one) could not be served. A site's pools are sorted by slot_bytes, so
 * that the first that fits is the tightest. The counts describe the recording,
 * for reports. */
struct plan_pool {
	uint32_t site;
	uint32_t align_bytes; /* every slot is aligned to it */
	uint64_t slot_bytes;  /* a multiple of the granule and of align_bytes */
	uint32_t first_chunk;
	uint32_t chunk_count;
	uint32_t slot_count; /* in all its chunks */
	uint32_t max_live;   /* most of the site's blocks in its slots at once, recorded */
	uint64_t allocs;     /* allocations the recording counted in its slots */
};
static_assert(sizeof(struct plan_pool) == 40, "pool layout");

/* A run of a pool's slots: slot_count slots from offset_bytes on. Planned like a
 * block that lives from t_start on: the recording used them from then on (or
 * would have, in a longer run). Replay opens them at the same point: at the
 * site's allocation number occurrence, before which other blocks may hold
 * their bytes. */
struct plan_chunk {
	uint64_t offset_bytes;
	uint64_t t_start;
	uint32_t pool;
	uint32_t slot_count;
	uint32_t occurrence;
	uint32_t reserved; /* 0 */
};
static_assert(sizeof(struct plan_chunk) == 32, "chunk layout");

/* A realloc that fits its block's planned size stays in place when replayed. Such an
 * entry takes no space of its own: it names the entry whose block it continues
 * (in_place_of = that entry's index + 1, 0 otherwise), shares its offset, and that
 * block's lifetime is extended to cover it. */
struct plan_entry {
	uint32_t site;
	uint32_t occurrence;
	uint64_t size_bytes;
	uint64_t offset_bytes;
	uint64_t t_start;
	uint64_t t_end; /* exclusive; PLAN_T_INFINITY if never freed */
	uint32_t align_bytes;
	uint32_t flags; /* reserved, 0 */
	uint64_t in_place_of;
};
static_assert(sizeof(struct plan_entry) == 56, "entry layout");

/* Entries of one site per block in the file (see entry_codec.h). */
#define PLAN_BLOCK_ENTRIES 128u

static inline uint64_t plan_site_blocks(uint64_t entry_count)
{
	return (entry_count + PLAN_BLOCK_ENTRIES - 1) / PLAN_BLOCK_ENTRIES;
}

/* One image: its record and its tables. From the reader, the pointers point into
 * the validated buffer, and entries is NULL: the entries are encoded_entries,
 * block k being encoded_entries[blocks[k], blocks[k + 1]) (plan_image_entries
 * decodes them all). For the writer, the caller fills in entries, or leaves it
 * NULL and passes an image from the reader as it is; the *_offset and
 * entries_bytes fields of the record are ignored and recomputed. */
struct plan_image {
	struct plan_image_record record;
	const char *strings;
	const struct plan_module *modules;
	const struct plan_site *sites;
	const struct plan_frame *frames;
	const struct plan_pool *pools;
	const struct plan_chunk *chunks;
	const struct plan_symbol *symbols;     /* NULL if not symbolised */
	const uint32_t *frame_symbols;	       /* NULL if not symbolised */
	const struct plan_frame_size *frame_sizes;
	const struct plan_entry *entries;
	const uint64_t *blocks;
	const uint8_t *encoded_entries;
};

/* Validates a whole plan file in memory. Returns 0 if it is sound; otherwise a
 * negative errno (-EINVAL corrupt, -EPROTO foreign or not a plan, -ENOTSUP future
 * version) and a one-line reason in why (no trailing newline). Thread-safe;
 * does not allocate; async-signal-safe. */
int plan_file_validate(const void *buf, size_t len, char *why, size_t why_len);

/* What plan_file_validate_streaming tells its caller as validation goes. The buffer
 * is read in one pass, in file order, about a mebibyte at a time. */
struct plan_file_stream {
	/* [start, start + bytes) has been read and can be given back (the regions
	 * come in order from the start of the buffer; a file whose tables are out of
	 * the writer's order may still be read there afterwards). May be NULL. */
	void (*done)(const void *start, size_t bytes, void *ctx);
	/* Entries (decoded, count of them) of image passed their checks; they come
	 * in entry order, a block at a time. The file as a whole is sound only if
	 * validation then returns 0. May be NULL. */
	void (*entries)(uint32_t image, const struct plan_entry *first, uint64_t count, void *ctx);
	void *ctx;
};

/* The same, telling stream about its progress, so that a caller with the file
 * mapped can give pages back, and look at the entries while they are in cache. */
int plan_file_validate_streaming(const void *buf, size_t len, char *why, size_t why_len,
				 const struct plan_file_stream *stream);

/* Everything plan_file_validate checks but the entries themselves: the header, the
 * checksum, every table and the block table. A buffer that passes can be indexed
 * like a fully validated one, but each block must be checked when it is decoded
 * (entry_codec_decode, then the entry's bounds): replay does this, a block at a
 * time, so that a plan of millions of entries is not decoded twice. stream->entries
 * is not called. */
int plan_file_validate_tables(const void *buf, size_t len, char *why, size_t why_len,
			      const struct plan_file_stream *stream);

/* Reads the header of the plan file open at fd, of len bytes (its size when
 * opened), into a fresh anonymous mapping of len bytes, checks that the image
 * table lies inside the file, and, if verify, verifies the checksum over the
 * whole file, streamed through a small buffer (a caller that knows the file
 * passed already need not). The image records are read only when asked for
 * (plan_file_read_records and plan_file_read_args, into the caller's memory,
 * and plan_file_read_image, into the buffer), and so are the images' tables:
 * a process replays one image, and a plan recorded through a shell script or
 * make has hundreds, whose records alone (304 bytes each) were 57 KiB of
 * every process's resident set (pages never written cost no memory).
 * Everything is read with pread: a file truncated or rewritten meanwhile gives
 * an error or a checksum mismatch, never SIGBUS as a file mapping would, and
 * nothing that was read can change afterwards. Returns 0 with *buf (give it
 * back with plan_file_unmap), or a negative errno and a one-line reason in
 * why. May allocate. */
int plan_file_read_index(int fd, uint64_t len, bool verify, void **buf, char *why,
			 size_t why_len);

/* Copies the records of images [first, first + count) of the file open at fd
 * into out, for the header in buf (from plan_file_read_index). Their fields
 * are as the file says: unchecked. Returns 0, -EINVAL if the range is past the
 * image table, or a read error (-EIO if the file was cut short). */
int plan_file_read_records(int fd, const void *buf, uint32_t first, uint32_t count,
			   struct plan_image_record *out);

/* Where the arguments of image i, whose record is rec (argv, each argument
 * NUL-terminated), lie in a plan file of len bytes: *at and *bytes, once the
 * record says they lie in its string table inside the file. Returns 0, or
 * -EINVAL and a one-line reason in why. */
int plan_file_args_span(const struct plan_image_record *rec, uint32_t i, uint64_t len, uint64_t *at,
			uint32_t *bytes, char *why, size_t why_len);

/* Copies the bytes [at, at + bytes) of the file open at fd (at most cap of
 * them, *got) into args: the arguments of an image, where plan_file_args_span
 * found them. What choosing an image by its arguments reads, one read an
 * image, into memory the caller reuses for each image it compares. Returns 0
 * or a negative errno and a one-line reason in why. */
int plan_file_read_args(int fd, uint64_t at, uint32_t bytes, char *args, uint32_t cap,
			uint32_t *got, char *why, size_t why_len);

/* Reads the record and every table of image i into buf but its symbols and
 * its entries, and checks them as plan_file_validate_tables does: a buffer
 * that passes can be indexed for image i (plan_file_image) like a fully
 * validated one, but for its symbols (their tables lie inside the file,
 * unread: zero), and each block of entries must be checked when it is
 * decoded. The file must be the one plan_file_read_index read (the caller
 * checks that it is, by its identity). Returns 0 or a negative errno and a
 * one-line reason in why. */
int plan_file_read_image(int fd, void *buf, uint64_t len, uint32_t i, char *why, size_t why_len);

/* Gives back a buffer from plan_file_read_index or plan_file_map. */
void plan_file_unmap(void *buf, uint64_t len);

/* The header of a validated buffer. */
const struct plan_file_header *plan_file_header(const void *buf);

/* Fills *image with image i (< image_count) of a validated buffer. Does not
 * allocate. */
void plan_file_image(const void *buf, uint32_t i, struct plan_image *image);

/* Whether image's executable had no build-id when it was recorded: its
 * exe_key is then the hash of its path (exe_path), so that replay finds the
 * image only for a run of the executable at that path. Does not allocate. */
bool plan_image_exe_by_path(const struct plan_image *image);

/* Decodes all entries of an image from a validated buffer into a new malloc'ed
 * array (*out, record.entry_count of them, in entry order). Returns 0 or -ENOMEM. */
int plan_image_entries(const struct plan_image *image, struct plan_entry **out);

/* Serialises images into a fresh malloc'ed buffer (*out, *out_len), computing
 * offsets and the checksum. Returns 0, -EINVAL if an image is inconsistent (the
 * same checks as the reader), or -ENOMEM. May allocate. */
int plan_file_serialize(const struct plan_image *images, uint32_t image_count, uint64_t record_id,
			void **out, size_t *out_len);

/* Writes images to path as a plan file, atomically (see atomic_file.h), without
 * copying the tables into one buffer first. Returns 0, -EINVAL as
 * plan_file_serialize, or a negative errno from the file system. May allocate. */
int plan_file_write(const char *path, const struct plan_image *images, uint32_t image_count,
		    uint64_t record_id);

/* Reads and validates a plan file from disk into a malloc'ed buffer. Returns 0 or a
 * negative errno with a reason in why (as plan_file_validate, plus I/O errors).
 * May allocate. */
int plan_file_load(const char *path, void **buf, size_t *len, char *why, size_t why_len);

/* Maps the plan file at path read-only and validates all of it, as
 * plan_file_load does, a mebibyte at a time, giving each part's pages back to
 * the page cache once checked: a big plan costs its reader little memory. The
 * mapping (*buf, *len) is used as a loaded buffer is; give it back with
 * plan_file_unmap. A file truncated while mapped raises SIGBUS when read: for
 * tools, which can say so and stop, not for the program being replayed
 * (plan_file_read_tables). Returns 0 or a negative errno with a reason in why.
 * May allocate. */
int plan_file_map(const char *path, const void **buf, size_t *len, char *why, size_t why_len);

/* The record id in the header of the plan file at path, or 0 if it has no plan
 * header. Reads only the header: files are replaced atomically, so a header that
 * is there belongs to a complete file (which a full load still validates).
 * Does not allocate. */
uint64_t plan_file_peek_record_id(const char *path);

/* Whether a plan may be written over the file at path: there is none, it is
 * empty, or it starts as a plan does (a torn or corrupt plan is one to
 * replace). Anything else (`-o app` typed for `-o app.plan`: the program
 * itself, a source file) is data a plan must never take the place of. */
bool plan_file_may_replace(const char *path);

/* Whether the file at path starts as a plan does (a plan, or a torn one): a
 * file that statistics or a CSV must not be written into. Does not allocate. */
bool plan_file_starts_as_plan(const char *path);

/* Marks in classes (a size_classes bitmap) every class a slot of pools[0..n)
 * can serve: those up to its own. */
void plan_size_classes_add_pools(uint64_t *classes, const struct plan_pool *pools, uint32_t n);

/* The path of module m of image, and the image's argv as one string with NULs. */
static inline const char *plan_image_module_path(const struct plan_image *image, uint32_t m)
{
	return image->strings + image->modules[m].path_offset;
}
