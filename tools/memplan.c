/* The memplan command: a dispatcher to one subcommand per file (cmd_*.c). */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "config.h"

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
} commands[] = {
    {"record", cmd_record, "run a command and write its plan"},
    {"replay", cmd_replay, "run a command on its planned arena"},
    {"show", cmd_show, "print what a plan says (arena, lower bound, top call sites)"},
    {"plan", cmd_plan, "plan a packing instance (CSV) or re-plan a plan file"},
    {"diff", cmd_diff, "compare two plans: figures and the call sites that changed"},
    {"check", cmd_check, "check a plan against limits, for a CI memory gate"},
};

static int usage(FILE *out)
{
	fprintf(out, "usage: memplan COMMAND [ARGS...]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\nmemplan COMMAND --help shows a command's options.\n");
	return out == stderr ? 2 : 0;
}

/* Plans are mapped (plan_file_map): one cut short while it is read raises
 * SIGBUS. Say so and stop, as for any other failure. */
static void on_sigbus(int sig)
{
	static const char msg[] = "memplan: a plan file was cut short while it was read\n";

	(void)sig;
	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(1);
	_exit(1);
}

int main(int argc, char **argv)
{
	signal(SIGBUS, on_sigbus);
	if (argc < 2)
		return usage(stderr);
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help"))
		return usage(stdout);
	if (!strcmp(argv[1], "--version")) {
		printf("memplan %s\n", MEMPLAN_VERSION);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (!strcmp(argv[1], commands[i].name)) {
			/* getopt names argv[0] in its messages: "memplan record: ...". */
			char name[32];
			snprintf(name, sizeof(name), "memplan %s", commands[i].name);
			argv[1] = name;
			return commands[i].run(argc - 1, argv + 1);
		}
	}
	fprintf(stderr, "memplan: unknown command '%s'\n", argv[1]);
	return usage(stderr);
}
