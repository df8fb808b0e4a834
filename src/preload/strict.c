/* Strict replay in the raw form, see strict.h.
 *
 * The status is changed in an on_exit handler, which glibc hands the status.
 * It was registered from the constructor, before __libc_start_main registered
 * the destructors' caller, so it runs after the destructors (replay's finish
 * included). glibc lets an exit handler call exit again: the remaining
 * handlers run, stdio is flushed, and the process ends with the last status
 * given. */
#define _GNU_SOURCE
#include "strict.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "big_bss.h"
#include "decimal_text.h"
#include "init.h"
#include "log.h"
#include "quiet_fd.h"

static bool judging;   /* this is the first process of a strict command */
static pid_t judge_pid; /* which, not a child forked from it */
static double min_hit_pct;
static char min_hit_text[32]; /* as the user wrote it, for the message */
static const char *bad_setting;
static bool started_ok;
static off_t stats_from = -1; /* where this run's statistics lines start */
/* stderr as it was at start-up: coreutils close theirs before they exit. */
static int stderr_copy = STDERR_FILENO;
/* The file stderr_copy was made of: a program that closes every descriptor
 * past 2 (a daemon) and opens files of its own may have one at its number. */
static dev_t stderr_copy_dev;
static ino_t stderr_copy_ino;

/* Where the verdict goes: the copy of stderr, if it still is one; else the
 * program's stderr as it is now. (Once the verdict went into a data file the
 * program had opened at the copy's number.) */
static int verdict_fd(void)
{
	struct stat st;

	if (stderr_copy != STDERR_FILENO &&
	    (fstat(stderr_copy, &st) != 0 || st.st_dev != stderr_copy_dev ||
	     st.st_ino != stderr_copy_ino))
		return STDERR_FILENO;
	return stderr_copy;
}

/* This image's own figures, from replay's finish. */
static struct tally {
	uint64_t allocs, hits, lines;
	bool in_plan;
	bool unreadable; /* a process found the plan unreadable (changed meanwhile) */
} own;

/* A bad setting fails the command rather than let it pass unchecked; the one
 * line that names the setting says so, and the end says nothing more. */
#define BAD_SETTING_ENDS "; the command will end with status 1"

/* As memplan replay --min-hit-rate reads it (decimal_text.h), 0 to 100. */
static bool parse_percent(const char *s, double *out)
{
	double v;

	if (!decimal_text_parse(s, &v) || v > 100)
		return false;
	*out = v;
	return true;
}

static void on_exit_judge(int status, void *arg)
{
	(void)arg;
	preload_finish(false); /* this image's line, if the destructor has not run */
	if (status == 0 && strict_exit_status(0) == 1)
		exit(1);
}

/* The marker 1:PID:OFFSET; returns whether s is one, with its fields. */
static bool parse_marker(const char *s, long *pid, long long *from)
{
	char end;

	return sscanf(s, "1:%ld:%lld%c", pid, from, &end) == 2;
}

void strict_start(bool started)
{
	const char *s = getenv("MEMPLAN_STRICT"), *rate = getenv("MEMPLAN_MIN_HIT_RATE");
	bool on = false;
	long pid;
	long long from = -1;
	struct stat st;

	if (s && *s && strcmp(s, "0") != 0) {
		on = true;
		if (parse_marker(s, &pid, &from)) {
			if (pid != (long)getpid())
				return; /* another process of the command judges it */
		} else if (strcmp(s, "1") != 0) {
			log_error("MEMPLAN_STRICT='", s, "' is not 0 or 1", BAD_SETTING_ENDS, NULL);
			bad_setting = "MEMPLAN_STRICT has a bad value";
		}
	}
	if (rate && *rate) {
		on = true;
		snprintf(min_hit_text, sizeof(min_hit_text), "%s", rate);
		if (!parse_percent(rate, &min_hit_pct)) {
			log_error("MEMPLAN_MIN_HIT_RATE='", min_hit_text,
				  "' is not a percentage from 0 to 100", BAD_SETTING_ENDS, NULL);
			bad_setting = "MEMPLAN_MIN_HIT_RATE has a bad value";
		}
	}
	if (!on)
		return;
	judging = true;
	judge_pid = getpid();
	started_ok = started;
	if (from < 0 && preload_config.stats_path[0]) {
		if (stat(preload_config.stats_path, &st) == 0)
			from = S_ISREG(st.st_mode) ? st.st_size : -1;
		else if (errno == ENOENT)
			from = 0;
	}
	stats_from = from;
	char marker[64];
	snprintf(marker, sizeof(marker), "1:%ld:%lld", (long)getpid(), from);
	setenv("MEMPLAN_STRICT", marker, 1);
	int fd = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
	if (fd >= 0 && fstat(fd, &st) == 0) {
		stderr_copy = quiet_fd(fd);
		stderr_copy_dev = st.st_dev;
		stderr_copy_ino = st.st_ino;
	} else if (fd >= 0) {
		close(fd);
	}
	on_exit(on_exit_judge, NULL);
}

void strict_judge(bool in_plan, uint64_t hits, uint64_t allocs)
{
	own = (struct tally){.allocs = allocs, .hits = hits, .lines = 1, .in_plan = in_plan};
}

/* The number after key in line, or 0. */
static uint64_t number_after(const char *line, const char *key)
{
	const char *p = strstr(line, key);
	uint64_t v = 0;

	if (!p)
		return 0;
	for (p += strlen(key); *p >= '0' && *p <= '9'; p++)
		v = v * 10 + (uint64_t)(*p - '0');
	return v;
}

/* Adds up the statistics lines of this run (json_line.c writes each key once,
 * and a string value cannot hold an unescaped quote, so a key is found by its
 * quoted name). A line longer than the buffer is skipped. */
static void count_lines(struct tally *t)
{
	static char buf[16384] BIG_BSS;
	size_t have = 0;
	bool skipping = false;
	ssize_t n;
	int fd = open(preload_config.stats_path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	if (lseek(fd, stats_from, SEEK_SET) != stats_from) {
		close(fd);
		return;
	}
	while ((n = read(fd, buf + have, sizeof(buf) - 1 - have)) > 0) {
		have += (size_t)n;
		buf[have] = '\0';
		char *line = buf, *nl;
		while ((nl = strchr(line, '\n'))) {
			*nl = '\0';
			if (!skipping && strstr(line, "\"allocs\":")) {
				t->allocs += number_after(line, "\"allocs\":");
				t->hits += number_after(line, "\"hits\":");
				t->in_plan |= strstr(line, "\"exe_in_plan\":true") != NULL;
				t->unreadable |= strstr(line, "\"plan_unreadable\":true") != NULL;
				t->lines++;
			}
			skipping = false;
			line = nl + 1;
		}
		have -= (size_t)(line - buf);
		memmove(buf, line, have);
		if (have == sizeof(buf) - 1) {
			have = 0;
			skipping = true;
		}
	}
	close(fd);
}

int strict_exit_status(int status)
{
	struct tally all = {0};
	char a[21], b[21];
	const char *why = bad_setting;

	if (status != 0 || !judging || getpid() != judge_pid)
		return status;
	judging = false; /* said once, whichever way the process ends */
	if (stats_from >= 0 && !preload_is_sealed()) /* no file opens in a sandbox */
		count_lines(&all);
	bool whole = all.lines != 0;
	if (!whole)
		all = own;
	if (!why && !started_ok)
		why = "the plan could not be used";
	if (!why && all.unreadable)
		why = "a process of the command could not read the plan";
	if (!why && all.lines && !all.in_plan)
		why = whole ? "no process of the command found its program in the plan"
			    : "the plan has no image of this program";
	if (!why && all.allocs && (double)all.hits * 100.0 < min_hit_pct * (double)all.allocs) {
		log_error_to(verdict_fd(), preload_config.plan_path, ": ", log_u64(a, all.hits),
			     " of ", log_u64(b, all.allocs),
			     all.allocs == 1 ? " allocation" : " allocations",
			     " served from the arena, under MEMPLAN_MIN_HIT_RATE=", min_hit_text,
			     "; exit status 1", NULL);
		return 1;
	}
	if (!why)
		return status;
	if (why != bad_setting) /* a bad setting was said at start-up */
		log_error_to(verdict_fd(), preload_config.plan_path, ": ", why, "; exit status 1",
			     NULL);
	return 1;
}
