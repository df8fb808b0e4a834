/* The memplan command: a dispatcher to one subcommand per file (cmd_*.c). */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "launch.h"
#include "config.h"
#include "version.h"

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
	fprintf(out, "usage: memplan COMMAND [ARGS...]\n"
		     "       memplan help [COMMAND]\n"
		     "       memplan -V | --version\n");
	if (out == stderr)
		return 2;
	fprintf(out, "\n"
		     "memplan gives an unmodified Linux program a precomputed memory layout:\n"
		     "record its allocations once, plan them into one arena, and replay later\n"
		     "runs from it.\n"
		     "\n"
		     "commands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\n"
		     "options:\n"
		     "  -h, --help     this help\n"
		     "  -V, --version  the version and the git revision memplan was built from\n"
		     "\n"
		     "memplan help COMMAND (or memplan COMMAND --help) describes a command's\n"
		     "options; man memplan describes them all, and the environment variables\n"
		     "of the raw LD_PRELOAD form.\n"
		     "\n"
		     "examples:\n"
		     "  memplan record -o app.plan -- ./app args\n"
		     "  memplan replay -p app.plan -- ./app args\n"
		     "  memplan show app.plan\n");
	return 0;
}

/* Runs command i with argv (argv[0] its name), getopt naming it in its
 * messages: "memplan record: ...". */
static int run(size_t i, int argc, char **argv)
{
	char name[32];

	snprintf(name, sizeof(name), "memplan %s", commands[i].name);
	argv[0] = name;
	return commands[i].run(argc, argv);
}

static int find(const char *name)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(name, commands[i].name))
			return (int)i;
	return -1;
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
	launch_raise_descriptor_limit();
	if (argc < 2)
		return usage(stderr);
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		if (argc > 2) {
			fprintf(stderr, "memplan: %s: unexpected argument '%s'\n", argv[1],
				argv[2]);
			return usage(stderr);
		}
		return usage(stdout);
	}
	if (!strcmp(argv[1], "help")) {
		/* memplan help --help: the help of help is memplan's own. */
		if (argc == 2 ||
		    (argc == 3 && (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h"))))
			return usage(stdout);
		if (argc > 3) {
			fprintf(stderr,
				"memplan: help: unexpected argument '%s' (one command expected)\n",
				argv[3]);
			return usage(stderr);
		}
		int i = find(argv[2]);
		if (i < 0) {
			fprintf(stderr, "memplan: help: no command '%s'\n", argv[2]);
			return usage(stderr);
		}
		char help[] = "--help", *args[] = {NULL, help, NULL};
		return run((size_t)i, 2, args);
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		if (argc > 2) {
			fprintf(stderr, "memplan: %s: unexpected argument '%s'\n", argv[1],
				argv[2]);
			return usage(stderr);
		}
		printf("memplan %s (git %s)\n", MEMPLAN_VERSION, MEMPLAN_REVISION);
		return 0;
	}
	int i = find(argv[1]);
	if (i >= 0)
		return launch_end_as_command(run((size_t)i, argc - 1, argv + 1));
	fprintf(stderr, "memplan: unknown command '%s'\n", argv[1]);
	return usage(stderr);
}
