/* JSON output, see json_print.h. */
#include "json_print.h"

#include <string.h>

#include "image_match.h"
#include "utf8.h"

void json_print_string(FILE *out, const char *s, size_t len)
{
	fputc('"', out);
	for (size_t i = 0; i < len;) {
		unsigned char c = (unsigned char)s[i];
		size_t n = utf8_sequence_length(s + i, len - i);
		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20 || !n)
			fprintf(out, "\\u%04x", c);
		else {
			fwrite(s + i, 1, n, out);
			i += n;
			continue;
		}
		i++;
	}
	fputc('"', out);
}

void json_print_text(FILE *out, const char *s)
{
	if (s)
		json_print_string(out, s, strlen(s));
	else
		fputs("null", out);
}

void json_print_args(FILE *out, const struct plan_image *im)
{
	const char *first = image_match_next_arg(im, NULL);

	fputc('[', out);
	for (const char *a = first; a; a = image_match_next_arg(im, a)) {
		if (a != first)
			fputc(',', out);
		json_print_text(out, a);
	}
	fputc(']', out);
}

void json_print_function(FILE *out, const char *function, const char *module, const char *file,
			 uint32_t line, bool inlined)
{
	fprintf(out, "{\"function\":");
	json_print_text(out, function);
	fprintf(out, ",\"module\":");
	json_print_text(out, module);
	fprintf(out, ",\"file\":");
	json_print_text(out, file);
	fprintf(out, ",\"line\":%u,\"inlined\":%s}", line, inlined ? "true" : "false");
}
