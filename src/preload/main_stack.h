/* The main thread's stack bounds, found as glibc's pthread_getattr_np finds
 * them, without its stdio.
 *
 * pthread_getattr_np reads the main thread's stack from /proc/self/maps with
 * fopen, getline and sscanf, code that a small program (sort, head, a shell)
 * never runs otherwise: under memplan those pages of libc's text counted 120 to
 * 170 KiB more in its resident set (the kernel maps the page cache 64 KiB at a
 * time around each fault). This reads the file through a buffer on the stack
 * and parses only the address ranges, where main_stack_bounds must read it. */
#ifndef MEMPLAN_MAIN_STACK_H
#define MEMPLAN_MAIN_STACK_H

#include <stdbool.h>
#include <stdint.h>

/* The bounds [*low, *top) of the main thread's stack, whose frames include
 * stack_end (__libc_stack_end): *top is the page after stack_end, *low as far
 * below as the stack's size limit lets it grow without reaching the mapping
 * below it. Found from where the kernel put the executable's name, or, where
 * that cannot tell, by main_stack_bounds_from_maps. False if neither can.
 * Allocates nothing. */
bool main_stack_bounds(uintptr_t stack_end, uintptr_t *low, uintptr_t *top);

/* The same from /proc/self/maps, for any stack: false if the file cannot be
 * read or holds no mapping with stack_end. */
bool main_stack_bounds_from_maps(uintptr_t stack_end, uintptr_t *low, uintptr_t *top);

#endif
