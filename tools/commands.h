/* The memplan subcommands. Each takes the arguments after its own name (argv[0] is
 * the subcommand name) and returns the process exit status: 0 on success, 1 on a
 * failure, 2 on a usage error. Each prints its own errors as "memplan: ...". */
#pragma once

int cmd_record(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_check(int argc, char **argv);
