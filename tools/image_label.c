/* Naming process images in reports, see image_label.h. */
#include "image_label.h"

#include <string.h>

const char *image_label_mark(const struct plan_image *im)
{
	return im->record.flags & PLAN_IMAGE_FORKED ? " (forked)" : "";
}

void image_label(const struct plan_image *im, image_command_fn *command, char *out, size_t cap)
{
	const char *mark = image_label_mark(im);

	if (strlen(mark) >= cap)
		mark = "";
	command(im, out, cap - strlen(mark));
	memcpy(out + strlen(out), mark, strlen(mark) + 1);
}
