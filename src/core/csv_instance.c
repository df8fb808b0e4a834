/* Reading and writing MiniMalloc CSV packing instances (see csv_instance.h for the
 * accepted format). The whole file is parsed from one buffer by hand rather than
 * with sscanf: inputs run to millions of rows, and every field must be checked
 * for garbage and overflow so that a bad line is reported with its number. */
#include "csv_instance.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum csv_column { COL_ID, COL_LOWER, COL_UPPER, COL_SIZE, COL_ALIGNMENT, COL_OFFSET, COL_COUNT };

static const char *const column_names[COL_COUNT] = {"id",   "lower",	 "upper",
						    "size", "alignment", "offset"};

static void set_why(char *why, size_t why_len, const char *fmt, ...)
{
	va_list ap;

	if (!why || !why_len)
		return;
	va_start(ap, fmt);
	vsnprintf(why, why_len, fmt, ap);
	va_end(ap);
}

/* Trims blanks around [*s, *e). */
static void trim(const char **s, const char **e)
{
	while (*s < *e && (**s == ' ' || **s == '\t'))
		(*s)++;
	while (*e > *s && ((*e)[-1] == ' ' || (*e)[-1] == '\t' || (*e)[-1] == '\r'))
		(*e)--;
}

static bool parse_u64(const char *s, const char *e, uint64_t *out)
{
	uint64_t v = 0;

	if (s == e)
		return false;
	for (; s < e; s++) {
		if (*s < '0' || *s > '9')
			return false;
		unsigned d = (unsigned)(*s - '0');
		if (v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = v;
	return true;
}

/* Maps each header field to a column; -1 means absent. */
static int parse_header(const char *s, const char *e, int *field_of, int *nfields, char *why,
			size_t why_len)
{
	int nf = 0;

	for (int c = 0; c < COL_COUNT; c++)
		field_of[c] = -1;
	for (;;) {
		const char *comma = memchr(s, ',', (size_t)(e - s));
		const char *fe = comma ? comma : e;
		const char *fs = s;
		int col = -1;

		trim(&fs, &fe);
		for (int c = 0; c < COL_COUNT; c++) {
			if (strlen(column_names[c]) == (size_t)(fe - fs) &&
			    !memcmp(column_names[c], fs, (size_t)(fe - fs)))
				col = c;
		}
		if (col < 0) {
			set_why(why, why_len,
				"line 1: unknown column '%.*s' (expected id,lower,upper,size"
				" and optionally alignment,offset)",
				(int)(fe - fs), fs);
			return -EINVAL;
		}
		if (field_of[col] >= 0) {
			set_why(why, why_len, "line 1: column '%s' appears twice",
				column_names[col]);
			return -EINVAL;
		}
		field_of[col] = nf++;
		if (!comma)
			break;
		s = comma + 1;
	}
	for (int c = 0; c <= COL_SIZE; c++) {
		if (field_of[c] < 0) {
			set_why(why, why_len, "line 1: header lacks the '%s' column",
				column_names[c]);
			return -EINVAL;
		}
	}
	*nfields = nf;
	return 0;
}

static bool blank_line(const char *s, const char *e)
{
	trim(&s, &e);
	return s == e;
}

int csv_instance_parse(const char *text, size_t len, struct csv_instance *inst, char *why,
		       size_t why_len)
{
	const char *p = text, *end = text + len;
	int field_of[COL_COUNT], nfields, ret;
	size_t rows = 0, cap_id = 0, line_no = 1;

	memset(inst, 0, sizeof(*inst));

	/* An id with a NUL in it would be cut there: written back, it would not
	 * name the same row, or any. Such a file is no text. */
	const char *nul = memchr(text, '\0', len);
	if (nul) {
		for (const char *q = text; q < nul; q++)
			line_no += *q == '\n';
		set_why(why, why_len, "line %zu: a NUL byte (this is not a CSV text file)",
			line_no);
		return -EINVAL;
	}

	/* Skip a UTF-8 byte order mark, which spreadsheet exports add. */
	if (len >= 3 && !memcmp(p, "\xef\xbb\xbf", 3))
		p += 3;
	const char *nl = memchr(p, '\n', (size_t)(end - p));
	const char *le = nl ? nl : end;
	if (blank_line(p, le)) {
		set_why(why, why_len, "line 1: missing header (expected id,lower,upper,size)");
		return -EINVAL;
	}
	ret = parse_header(p, le, field_of, &nfields, why, why_len);
	if (ret)
		return ret;
	p = nl ? nl + 1 : end;

	/* Upper bounds for the allocations: one row per newline, ids shorter than the text. */
	for (const char *q = p; q < end; q++)
		rows += *q == '\n';
	rows++;
	cap_id = (size_t)(end - p) + rows;

	inst->blocks = malloc(rows * sizeof(*inst->blocks));
	inst->id_pos = malloc(rows * sizeof(*inst->id_pos));
	inst->id_text = malloc(cap_id);
	if (!inst->blocks || !inst->id_pos || !inst->id_text) {
		ret = -ENOMEM;
		goto err_free;
	}
	inst->has_alignment = field_of[COL_ALIGNMENT] >= 0;

	size_t id_used = 0;
	uint64_t total = 0; /* CSV_INSTANCE_TOTAL_MAX */
	while (p < end) {
		line_no++;
		nl = memchr(p, '\n', (size_t)(end - p));
		le = nl ? nl : end;
		if (blank_line(p, le)) {
			p = nl ? nl + 1 : end;
			continue;
		}

		uint64_t v[COL_COUNT] = {0};
		const char *fs[COL_COUNT] = {0}, *fe[COL_COUNT] = {0};
		int f = 0;
		const char *s = p;
		for (;;) {
			const char *comma = memchr(s, ',', (size_t)(le - s));
			const char *e = comma ? comma : le;
			if (f >= nfields) {
				set_why(why, why_len, "line %zu: more than %d fields", line_no,
					nfields);
				ret = -EINVAL;
				goto err_free;
			}
			for (int c = 0; c < COL_COUNT; c++) {
				if (field_of[c] == f) {
					fs[c] = s;
					fe[c] = e;
					trim(&fs[c], &fe[c]);
				}
			}
			f++;
			if (!comma)
				break;
			s = comma + 1;
		}
		if (f < nfields) {
			set_why(why, why_len, "line %zu: %d fields, the header has %d", line_no, f,
				nfields);
			ret = -EINVAL;
			goto err_free;
		}
		for (int c = COL_LOWER; c < COL_COUNT; c++) {
			if (field_of[c] < 0)
				continue;
			if (!parse_u64(fs[c], fe[c], &v[c])) {
				set_why(why, why_len,
					"line %zu: %s '%.*s' is not an unsigned 64-bit"
					" decimal number",
					line_no, column_names[c], (int)(fe[c] - fs[c]), fs[c]);
				ret = -EINVAL;
				goto err_free;
			}
		}
		if (v[COL_UPPER] <= v[COL_LOWER]) {
			set_why(why, why_len,
				"line %zu: upper %" PRIu64 " is not above lower %" PRIu64
				" (the lifetime [lower, upper) is empty)",
				line_no, v[COL_UPPER], v[COL_LOWER]);
			ret = -EINVAL;
			goto err_free;
		}
		if (field_of[COL_ALIGNMENT] < 0) {
			v[COL_ALIGNMENT] = 1;
		} else if (!v[COL_ALIGNMENT] || (v[COL_ALIGNMENT] & (v[COL_ALIGNMENT] - 1))) {
			set_why(why, why_len,
				"line %zu: alignment %" PRIu64 " is not a power of two", line_no,
				v[COL_ALIGNMENT]);
			ret = -EINVAL;
			goto err_free;
		}
		/* Within the total, checked before each sum: none wraps. */
		uint64_t need = v[COL_ALIGNMENT] - 1;
		if (v[COL_SIZE] && (v[COL_SIZE] > CSV_INSTANCE_TOTAL_MAX - total ||
				    need > CSV_INSTANCE_TOTAL_MAX - total - v[COL_SIZE])) {
			set_why(why, why_len,
				"line %zu: the sizes and alignments so far add up to more than "
				"2^63 bytes (no arena could hold the blocks)",
				line_no);
			ret = -EINVAL;
			goto err_free;
		}
		if (v[COL_SIZE])
			total += v[COL_SIZE] + need;
		if (fs[COL_ID] == fe[COL_ID]) {
			set_why(why, why_len, "line %zu: empty id", line_no);
			ret = -EINVAL;
			goto err_free;
		}

		struct block *b = &inst->blocks[inst->n];
		b->size_bytes = v[COL_SIZE];
		b->t_start = v[COL_LOWER];
		b->t_end = v[COL_UPPER];
		b->align_bytes = v[COL_ALIGNMENT];
		b->offset_bytes = v[COL_OFFSET];
		size_t id_len = (size_t)(fe[COL_ID] - fs[COL_ID]);
		inst->id_pos[inst->n] = id_used;
		memcpy(inst->id_text + id_used, fs[COL_ID], id_len);
		inst->id_text[id_used + id_len] = 0;
		id_used += id_len + 1;
		inst->n++;
		p = nl ? nl + 1 : end;
	}
	return 0;

err_free:
	csv_instance_free(inst);
	return ret;
}

int csv_instance_read_fd(int fd, struct csv_instance *inst, char *why, size_t why_len)
{
	struct stat st;
	char *text = NULL;
	size_t len = 0;
	int ret;

	memset(inst, 0, sizeof(*inst));
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		set_why(why, why_len, "%s", strerror(errno));
		return ret;
	}
	/* A pipe or /dev/stdin has no size: grow as we read. */
	size_t cap = S_ISREG(st.st_mode) && st.st_size > 0 ? (size_t)st.st_size + 1 : 65536;
	text = malloc(cap);
	if (!text) {
		ret = -ENOMEM;
		set_why(why, why_len, "%s", strerror(ENOMEM));
		return ret;
	}
	for (;;) {
		if (len == cap) {
			char *t = realloc(text, cap * 2);
			if (!t) {
				ret = -ENOMEM;
				set_why(why, why_len, "%s", strerror(ENOMEM));
				goto err_free;
			}
			text = t;
			cap *= 2;
		}
		ssize_t r = read(fd, text + len, cap - len);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			set_why(why, why_len, "%s", strerror(errno));
			goto err_free;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	ret = csv_instance_parse(text, len, inst, why, why_len);

err_free:
	free(text);
	return ret;
}

int csv_instance_read(const char *path, struct csv_instance *inst, char *why, size_t why_len)
{
	int fd, ret;

	memset(inst, 0, sizeof(*inst));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		set_why(why, why_len, "%s", strerror(errno));
		return ret;
	}
	ret = csv_instance_read_fd(fd, inst, why, why_len);
	close(fd);
	return ret;
}

int csv_instance_write(FILE *out, const struct csv_instance *inst)
{
	fputs(inst->has_alignment ? "id,lower,upper,size,alignment,offset\n"
				  : "id,lower,upper,size,offset\n",
	      out);
	for (size_t i = 0; i < inst->n; i++) {
		const struct block *b = &inst->blocks[i];
		if (inst->has_alignment)
			fprintf(out,
				"%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n",
				csv_instance_id(inst, i), b->t_start, b->t_end, b->size_bytes,
				b->align_bytes, b->offset_bytes);
		else
			fprintf(out, "%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n",
				csv_instance_id(inst, i), b->t_start, b->t_end, b->size_bytes,
				b->offset_bytes);
	}
	if (fflush(out) || ferror(out))
		return -EIO;
	return 0;
}

void csv_instance_free(struct csv_instance *inst)
{
	free(inst->blocks);
	free(inst->id_pos);
	free(inst->id_text);
	memset(inst, 0, sizeof(*inst));
}
