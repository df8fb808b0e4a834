/* A JSON object built in a fixed buffer, without malloc or stdio, for the replay
 * statistics line written at exit (possibly from a signal handler). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Every string is cut to UTF8_JSON_STRING_MAX bytes (utf8.h): a replay line
 * with its two paths so cut, every number at its widest and argv0 (128 bytes,
 * each escaped in 6) takes 7,466 bytes, so that the numbers memplan reads back
 * always fit. */
struct json_line {
	char buf[8192];
	size_t len;
	bool need_comma;
	bool overflow;
};

void json_begin(struct json_line *j); /* { */
void json_key_u64(struct json_line *j, const char *key, uint64_t v);
void json_key_bool(struct json_line *j, const char *key, bool v);
/* Bytes of s that are not valid UTF-8 are escaped as \u00XX: the line stays JSON.
 * A string longer than UTF8_JSON_STRING_MAX escaped is cut in the middle,
 * "..." where it was cut (utf8_json_cut). */
void json_key_str(struct json_line *j, const char *key, const char *s);
void json_key_object(struct json_line *j, const char *key); /* "key": { */
void json_end(struct json_line *j);			    /* } */

/* How long json_append_line waits for a pipe's reader to make room. */
#define JSON_PIPE_WAIT_MS 2000

/* Appends the line and a newline to the statistics file path (stats_file.h) with
 * one O_APPEND write, so lines from concurrent processes never interleave. path
 * may be a regular file, a device or a pipe that some process reads
 * (file_open_append): never does it block the program for long, at most
 * JSON_PIPE_WAIT_MS for a full pipe. Returns 0 or a
 * negative errno (-ENOBUFS if the line did not fit, which no line
 * memplan writes comes to, -ENXIO for a FIFO that no process reads). */
int json_append_line(struct json_line *j, const char *path);
