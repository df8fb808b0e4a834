/* One `memplan record` at a time per plan file. Two recordings into one path
 * at once (parallel CI jobs in one workspace, make -j with one -o) would each
 * replace the other's file as their processes finish, and each end with a
 * plan that mixes or drops images of both, and no word of it. A recording
 * claims its plan file for as long as it runs; a second one is refused
 * before its command runs. The claim is an abstract Unix socket named after
 * the file (its directory's device and inode, and its name), which the kernel
 * gives back when memplan exits, however it exits: no lock file is left. */
#pragma once

/* Claims the plan file at path (absolute; its directory must exist). Returns
 * the claim's descriptor (close-on-exec, kept open until memplan exits),
 * -EBUSY if another recording holds it, or another negative errno if no claim
 * could be made (then record goes on without one). */
int record_claim(const char *path);
