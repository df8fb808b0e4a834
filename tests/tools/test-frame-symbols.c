/* Which frames of a call site reports show (frame_symbols_shown): none of
 * libc's start-up code below main, whether or not libc's debug information
 * names __libc_start_call_main, and whether or not main is named. The sites
 * are built by hand, with stored symbols, as a plan recorded on a machine
 * without libc6-dbg holds them. Exits 1 on a failed check. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame_symbols.h"

#define CHECK_EQ(a, b)                                                                             \
	do {                                                                                       \
		unsigned a_ = (a), b_ = (b);                                                       \
		if (a_ != b_) {                                                                    \
			fprintf(stderr, "%s:%d: %s is %u, not %u\n", __FILE__, __LINE__, #a, a_,  \
				b_);                                                               \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

static const char strings[] = "/usr/bin/app\0/usr/lib/x86_64-linux-gnu/libc.so.6\0"
			      "make_buf\0main\0__libc_start_main\0_start\0__libc_start_call_main";
enum { APP, LIBC };		  /* module indices */
enum { APP_PATH = 0, LIBC_PATH = 13 }; /* their paths' offsets */
enum { S_MAKE_BUF = 49, S_MAIN = 58, S_START_MAIN = 63, S_START = 81, S_CALL_MAIN = 88 };
#define NONE PLAN_NO_STRING

/* A site of frames (module, function or NONE), innermost first. Returns how
 * many frames a report shows. */
static uint32_t shown(unsigned n, const unsigned *module, const uint32_t *function)
{
	struct plan_module modules[2] = {{.path_offset = APP_PATH}, {.path_offset = LIBC_PATH}};
	struct plan_frame frames[8];
	struct plan_symbol symbols[8];
	uint32_t frame_symbols[9], k = 0;
	struct plan_site site = {.first_frame = 0, .frame_count = n};
	struct plan_image im = {
	    .strings = strings,
	    .modules = modules,
	    .sites = &site,
	    .frames = frames,
	    .symbols = symbols,
	    .frame_symbols = frame_symbols,
	};

	for (unsigned f = 0; f < n; f++) {
		frames[f] = (struct plan_frame){.module = module[f], .offset = 0x100 * (f + 1)};
		frame_symbols[f] = k;
		if (function[f] != NONE)
			symbols[k++] = (struct plan_symbol){.function = function[f], .file = NONE};
	}
	frame_symbols[n] = k;
	im.record.symbol_count = k ? k : 1;
	return frame_symbols_shown(&im, 0, NULL);
}

int main(void)
{
	const unsigned mod[] = {APP, APP, LIBC, LIBC, APP};
	/* libc's debug information installed: every start-up frame named. */
	const uint32_t named[] = {S_MAKE_BUF, S_MAIN, S_CALL_MAIN, S_START_MAIN, S_START};
	CHECK_EQ(shown(5, mod, named), 2);
	/* Not installed: __libc_start_call_main is unnamed, main is named. */
	const uint32_t bare[] = {S_MAKE_BUF, S_MAIN, NONE, S_START_MAIN, S_START};
	CHECK_EQ(shown(5, mod, bare), 2);
	/* A stripped program as well: neither main nor make_buf is named. */
	const uint32_t stripped[] = {NONE, NONE, NONE, S_START_MAIN, NONE};
	CHECK_EQ(shown(5, mod, stripped), 2);
	/* Cut by the recording depth before main's caller: all shown. */
	CHECK_EQ(shown(2, mod, bare), 2);
	CHECK_EQ(shown(3, mod, bare), 2);
	const uint32_t deep[] = {S_MAKE_BUF, S_MAKE_BUF, S_MAKE_BUF, S_MAKE_BUF, S_MAKE_BUF};
	const unsigned app[] = {APP, APP, APP, APP, APP};
	CHECK_EQ(shown(5, app, deep), 5);
	/* An unnamed libc frame in the middle of a stack stays. */
	const unsigned mid_mod[] = {LIBC, APP, APP, LIBC, APP};
	const uint32_t mid[] = {NONE, S_MAKE_BUF, S_MAIN, NONE, S_START};
	CHECK_EQ(shown(5, mid_mod, mid), 3);
	puts("frame_symbols_shown: ok");
	return 0;
}
