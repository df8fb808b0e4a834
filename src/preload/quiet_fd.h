/* The descriptors memplan keeps open in the program (the plan it replays,
 * a copy of stderr) are moved to numbers high above those the program uses, so
 * that a preloaded program sees the same numbers as a plain run: the first free
 * descriptor is the same, and a program that passes descriptor numbers to its
 * children (Python's multiprocessing does) finds them where it expects. */
#pragma once

/* Moves fd (close-on-exec from now on) to a number near the top of the soft
 * RLIMIT_NOFILE and returns it, closing the old one; returns fd unchanged if no
 * higher number is free. Async-signal-safe; does not allocate. */
int quiet_fd(int fd);
