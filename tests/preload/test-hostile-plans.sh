#!/usr/bin/env bash
# Well-formed but hostile plans (valid checksum, every entry in bounds, entries
# alive at the same time deliberately overlapping) must not crash the program,
# change its output, or yield overlapping live blocks: the pattern checks of
# pattern_threads and family would catch an overlap. The run-time occupancy check
# refuses the busy slots and counts them.
. "$(dirname "$0")/lib.sh"

for prog in "pattern_threads 4 20000" "family 5" "forker"; do
  set -- $prog
  name=$1
  run_plain "$name" "$PROGRAMS/$@"
  run_record "$name" "$PROGRAMS/$@"
  cp "$WORK/$name.plan" "$WORK/$name.good.plan"
  for mode in zero shuffle; do
    "$HOSTILE_PLAN" "$WORK/$name.good.plan" "$WORK/$name.plan" $mode
    for i in 1 2 3; do
      run_replay "$name" timeout 120 "$PROGRAMS/$@"
      same_as_plain "$name" replay
      no_memplan_messages "$name" replay
    done
    busy=$(stat_sum "$name" misses.slot_busy)
    hits=$(stat_sum "$name" hits)
    echo "$name/$mode: $hits served, $busy refused as busy"
    [ "$busy" -gt 0 ] || fail "$name/$mode: the overlapping plan was never refused"
  done
done
echo "hostile plans: ok"
