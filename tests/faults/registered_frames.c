/* A program that registers unwind tables of its own, as a JIT does with
 * __register_frame, and then unwinds (as a C++ throw would): libgcc sorts the
 * registered tables on first use, calling malloc while it holds the lock it
 * takes to find any frame's table. Prints "unwound N frames, ok".
 *
 * usage: registered_frames */
#define _GNU_SOURCE
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unwind.h>

void __register_frame(void *begin);
void __deregister_frame(void *begin);

/* The executable's own .eh_frame, from its PT_GNU_EH_FRAME header. */
static int find_eh_frame(struct dl_phdr_info *info, size_t size, void *out)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		if (info->dlpi_phdr[i].p_type != PT_GNU_EH_FRAME)
			continue;
		const uint8_t *hdr = (const uint8_t *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
		int32_t to_eh_frame;
		if (hdr[0] != 1 || hdr[1] != 0x1b) /* version 1, pc-relative sdata4 */
			return 1;
		memcpy(&to_eh_frame, hdr + 4, sizeof(to_eh_frame));
		*(const void **)out = hdr + 4 + to_eh_frame;
	}
	return 1; /* the first object is the executable */
}

static _Unwind_Reason_Code count_frame(struct _Unwind_Context *context, void *frames)
{
	++*(int *)frames;
	return _URC_NO_REASON;
}

int main(void)
{
	void *eh_frame = NULL;
	int frames = 0;

	dl_iterate_phdr(find_eh_frame, &eh_frame);
	if (!eh_frame) {
		fprintf(stderr, "registered_frames: no .eh_frame found\n");
		return 2;
	}
	__register_frame(eh_frame);
	_Unwind_Backtrace(count_frame, &frames);
	char *text = malloc(32);
	if (!text)
		return 1;
	snprintf(text, 32, "unwound %d frames, ok", frames);
	puts(text);
	free(text);
	__deregister_frame(eh_frame);
	return 0;
}
