/* uthash for the CLI: memplan runs out of memory as any failure ends, with a
 * message and status 1 (uthash's own default exits with -1, status 255). */
#pragma once

#include <stdio.h>
#include <stdlib.h>

#define uthash_fatal(msg) (fprintf(stderr, "memplan: out of memory\n"), exit(1))
#include <uthash.h>
