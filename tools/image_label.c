/* Naming process images in reports, see image_label.h. */
#include "image_label.h"

#include <stdbool.h>
#include <string.h>

#include "text_safe.h"

#define CUT_MARK "..."

/* Whether the recording cut the arguments of im: it keeps their first bytes,
 * the last argument's NUL then left out. */
static bool args_cut(const struct plan_image *im)
{
	uint32_t n = im->record.args_bytes;

	return n && im->strings[im->record.args_offset + n - 1] != '\0';
}

void image_label_command(const struct plan_image *im, image_command_fn *command, char *out,
			 size_t cap)
{
	bool cut = args_cut(im) && cap > strlen(CUT_MARK);
	size_t len;

	command(im, out, cut ? cap - strlen(CUT_MARK) : cap);
	len = strlen(out);
	/* A command too long for out ends in the mark already. */
	if (cut && (len < strlen(CUT_MARK) || strcmp(out + len - strlen(CUT_MARK), CUT_MARK)))
		memcpy(out + len, CUT_MARK, sizeof(CUT_MARK));
}

bool image_label_name(char *out, size_t cap, size_t *at, const char *exe, const char *argv0)
{
	const char *slash = argv0 ? strrchr(argv0, '/') : NULL;
	const char *ran = slash ? slash + 1 : argv0;

	if (!ran || !*ran || !strcmp(ran, exe))
		return text_safe_append(out, cap, at, exe, strlen(exe));
	return text_safe_append(out, cap, at, ran, strlen(ran)) &&
	       text_safe_append(out, cap, at, " (", 2) &&
	       text_safe_append(out, cap, at, exe, strlen(exe)) &&
	       text_safe_append(out, cap, at, ")", 1);
}

const char *image_label_mark(const struct plan_image *im)
{
	return im->record.flags & PLAN_IMAGE_FORKED ? " (forked)" : "";
}

void image_label(const struct plan_image *im, image_command_fn *command, char *out, size_t cap)
{
	const char *mark = image_label_mark(im);

	if (strlen(mark) >= cap)
		mark = "";
	image_label_command(im, command, out, cap - strlen(mark));
	memcpy(out + strlen(out), mark, strlen(mark) + 1);
}
