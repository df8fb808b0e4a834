#!/usr/bin/env bash
# memplan keeps no descriptor of the statistics file (the program would see
# it among its own): each process opens it by its path to write its line. A
# process that can no longer open files when it ends (a sandbox's, here one
# whose descriptor limit is used up) loses its line without a word on the
# program's stderr, and runs as it would; one that puts a file of its own
# under every descriptor number gets none of memplan's bytes in it.
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
  ! grep -q '"exe":".*closed_in"' "$WORK/nofile.stats" 2>/dev/null ||
    fail "nofile ($form): a statistics line from a process that could open nothing"
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
echo "no statistics from a process that cannot open files, and never into the program's file"
