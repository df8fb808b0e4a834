/* Parsing the subcommands' options, and the numbers they take as option
 * arguments. Each number parser returns 0, or -EINVAL if the text is not such
 * a number (the caller says which option wanted what). */
#pragma once

#include <getopt.h>
#include <stdint.h>

/* getopt_long (longindex aside), except that an option that takes a value is
 * refused a value of exactly "--" as getopt refuses a missing one: named on
 * stderr after argv[0], and '?' returned. In `record -o -- ./app` the value
 * was left out; taken as one, "--" would name a file. */
int cli_getopt(int argc, char **argv, const char *shortopts, const struct option *longopts);

/* A whole number from 0 up, in decimal, nothing before or after it. */
int cli_parse_count(const char *text, uint64_t *out);

/* --top: a whole number of rows, or "all" (UINT32_MAX). */
int cli_parse_top(const char *text, uint32_t *out);

/* A number from 0 up, digits with an optional fraction ("30", "2.5"): no
 * sign, exponent or hexadecimal. */
int cli_parse_decimal(const char *text, double *out);

/* A percentage: a decimal number as cli_parse_decimal reads it ("5", "2.5"). */
int cli_parse_percent(const char *text, double *out);

/* The word a user put where an option belongs: argv[optind] when it stands
 * alone before "--" (`memplan replay app.plan -- ./app`), else NULL. */
const char *cli_stray_word(int argc, char **argv, int optind);
