#!/usr/bin/env bash
# memplan leaves the program's descriptors where they are: the first open()
# returns the same number plainly, recording and replaying, through the CLI
# and in the raw form. (memplan's plan descriptor and libunwind's pipe once
# took the lowest free numbers: 5 under record, 6 under replay.)
. "$(dirname "$0")/lib.sh"

run_plain fd "$PROGRAMS/first_fd"
[ "$(rc fd plain)" -eq 0 ] || fail "first_fd failed on its own"
run_record fd "$PROGRAMS/first_fd"
same_as_plain fd record
valid_plan "$WORK/fd.plan" || fail "no sound plan of first_fd"
run_replay fd "$PROGRAMS/first_fd"
same_as_plain fd replay
[ "$(stat_sum "$WORK/fd.stats" hits)" -gt 0 ] || fail "the replay served nothing from the arena"
run fd raw-record env MEMPLAN_MODE=record MEMPLAN_PLAN="$WORK/raw.plan" LD_PRELOAD="$LIB" "$PROGRAMS/first_fd"
same_as_plain fd raw-record
run fd raw-replay env MEMPLAN_MODE=replay MEMPLAN_PLAN="$WORK/fd.plan" LD_PRELOAD="$LIB" "$PROGRAMS/first_fd"
same_as_plain fd raw-replay
for mode in record replay raw-record raw-replay; do
  no_memplan_messages fd $mode
done
echo "first free descriptor: $(cat "$WORK/fd.plain.out") in every mode: ok"

# Nor does the program see descriptors of memplan's among its own: a program
# that lists them (a test of a child's descriptors, as Python's test_subprocess
# has, or a daemon that audits its own) lists what a plain run lists. Replay
# kept the plan open (1008) and both modes the statistics file (1009).
list='import os; print(sorted(int(f) for f in os.listdir("/proc/self/fd")))'
for name in ls python3; do
  if [ $name = ls ]; then cmd=(ls /proc/self/fd); else cmd=(python3 -c "$list"); fi
  run_plain "$name" "${cmd[@]}"
  run_record "$name" "${cmd[@]}"
  run_replay "$name" "${cmd[@]}"
  same_as_plain "$name" record
  same_as_plain "$name" replay
  [ "$(stat_sum "$WORK/$name.stats" hits)" -gt 0 ] || fail "$name: the replay served nothing"
done
echo "descriptors listed by ls and python3: the same in every mode"
