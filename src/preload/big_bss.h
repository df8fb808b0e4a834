/* Where memplan's big zero-initialised arrays go: after all its other
 * variables.
 *
 * A process pays a page fault and 4 KiB of resident set for each page of
 * memplan's variables it first touches. Small variables lie wherever the
 * linker put them, and with arrays of kilobytes between them (buffers, the
 * path fields, tables used only now and then), a replayed `head` touched 13
 * pages of them at start-up, for a few hundred bytes of small variables.
 * Marked BIG_BSS, an array goes to .lbss, which the linker places after .bss
 * (the x86-64 large-data section, still addressed relative to the code like
 * any other in a library this size), and the small variables share a few
 * pages. For arrays of a KiB or more, written only in part or only now and
 * then; never for one with an initialiser. */
#pragma once

#define BIG_BSS __attribute__((section(".lbss")))
