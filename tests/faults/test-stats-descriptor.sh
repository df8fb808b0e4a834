#!/usr/bin/env bash
# The statistics line is written through a descriptor opened at start-up: a
# process that can no longer open files when it ends (a sandbox's, here one
# whose descriptor limit is used up) still writes it, where it used to say on
# stderr that it could not. A program that puts a file of its own under that
# descriptor's number gets none of memplan's bytes in it: the line then goes
# to the statistics file by its path.
. "$(dirname "$0")/lib.sh"

run_plain nofile "$PROGRAMS/closed_in" nofile
[ "$(rc nofile plain)" -eq 0 ] || fail "closed_in nofile failed on its own"
# Recorded with its descriptors left alone (a recording that cannot open files
# at exit cannot write its plan): the same allocations, other arguments.
"$MEMPLAN" record -o "$WORK/nofile.plan" -- "$PROGRAMS/closed_in" open >/dev/null ||
  fail "closed_in open failed under record"
for form in cli raw; do
  rm -f "$WORK/nofile.stats"
  if [ $form = cli ]; then
    run_replay nofile "$PROGRAMS/closed_in" nofile
  else
    run nofile replay env MEMPLAN_MODE=replay MEMPLAN_PLAN="$WORK/nofile.plan" \
      MEMPLAN_STATS="$WORK/nofile.stats" LD_PRELOAD="$LIB" "$PROGRAMS/closed_in" nofile
  fi
  same_as_plain nofile replay
  no_memplan_messages nofile replay
  [ "$(grep -c '"exe":".*closed_in"' "$WORK/nofile.stats")" -eq 1 ] ||
    fail "nofile ($form): no statistics line: $(cat "$WORK/nofile.stats" 2>/dev/null)"
  [ "$(stat_sum "$WORK/nofile.stats" hits)" -gt 0 ] || fail "nofile ($form): nothing served"
done

run_plain clobber "$PROGRAMS/closed_in" clobber "$WORK/own.plain"
run_record clobber "$PROGRAMS/closed_in" clobber "$WORK/own.record"
same_as_plain clobber record
rm -f "$WORK/clobber.stats"
run_replay clobber "$PROGRAMS/closed_in" clobber "$WORK/own.replay"
same_as_plain clobber replay
for mode in plain record replay; do
  [ "$(cat "$WORK/own.$mode")" = "the program's own" ] ||
    fail "clobber: memplan wrote into the program's file under $mode: $(head -c 200 "$WORK/own.$mode")"
done
[ "$(grep -c '"exe":".*closed_in"' "$WORK/clobber.stats")" -eq 1 ] ||
  fail "clobber: no statistics line: $(cat "$WORK/clobber.stats" 2>/dev/null)"
echo "statistics written by a process that cannot open files, and never into the program's"
