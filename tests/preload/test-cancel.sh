#!/usr/bin/env bash
# Threads cancelled while they allocate. glibc's malloc is no cancellation
# point; memplan's reads of the plan (open, pread, close) are, and a worker
# cancelled in one died holding the lock of the plan's windows: the next
# thread to read entries waited for ever (5 replays of 5 hung). Each run
# below must end, with the plain run's output.
. "$(dirname "$0")/lib.sh"

prog=$PROGRAMS/cancel_workers
run_plain cancel "$prog" 100
[ "$(cat "$WORK/cancel.plain.rc")" = 0 ] || fail "cancel_workers failed on its own"
for round in 1 2 3; do
  set +e
  timeout 60 "$MEMPLAN" record -o "$WORK/cancel.plan" -- "$prog" 100 \
    >"$WORK/cancel.record.out" 2>"$WORK/cancel.record.err"
  echo $? >"$WORK/cancel.record.rc"
  timeout 60 "$MEMPLAN" replay -p "$WORK/cancel.plan" --stats "$WORK/cancel.stats" -- "$prog" 100 \
    >"$WORK/cancel.replay.out" 2>"$WORK/cancel.replay.err"
  echo $? >"$WORK/cancel.replay.rc"
  set -e
  [ "$(cat "$WORK/cancel.replay.rc")" != 124 ] || fail "replay $round hung (timeout after 60 s)"
  [ "$(cat "$WORK/cancel.record.rc")" != 124 ] || fail "record $round hung (timeout after 60 s)"
  same_as_plain cancel record
  same_as_plain cancel replay
done
hit_ratio_at_least cancel 90
echo "cancelled workers: no hang in 3 records and 3 replays"
