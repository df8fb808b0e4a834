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
# Undecodable blocks behind valid tables and checksum: memplan replay's strict
# check refuses the plan with one line; the raw form, which checks entries as it
# reads them, serves the good blocks and counts the others as unreadable.
LIB=$(dirname "$(dirname "$MEMPLAN")")/src/preload/libmemplan.so
name=pattern_threads
"$HOSTILE_PLAN" "$WORK/$name.good.plan" "$WORK/bad.plan" badblocks
set +e
"$MEMPLAN" replay -p "$WORK/bad.plan" -- "$PROGRAMS/pattern_threads" 4 20000 \
  >"$WORK/bad-cli.out" 2>"$WORK/bad-cli.err"
echo $? >"$WORK/bad-cli.rc"
MEMPLAN_MODE=replay MEMPLAN_PLAN="$WORK/bad.plan" MEMPLAN_STATS="$WORK/bad.stats" \
  LD_PRELOAD="$LIB" "$PROGRAMS/pattern_threads" 4 20000 >"$WORK/bad-raw.out" 2>"$WORK/bad-raw.err"
echo $? >"$WORK/bad-raw.rc"
set -e
for form in cli raw; do
  cmp -s "$WORK/$name.plain.out" "$WORK/bad-$form.out" || fail "badblocks/$form: output changed"
  cmp -s "$WORK/$name.plain.rc" "$WORK/bad-$form.rc" || fail "badblocks/$form: exit status changed"
done
[ "$(grep -c . "$WORK/bad-cli.err")" -eq 1 ] && grep -q "are malformed" "$WORK/bad-cli.err" ||
  fail "badblocks/cli: expected one line about malformed entries, got: $(cat "$WORK/bad-cli.err")"
[ ! -s "$WORK/bad-raw.err" ] || fail "badblocks/raw: unexpected messages: $(cat "$WORK/bad-raw.err")"
unreadable=$(python3 -c 'import json,sys; print(sum(json.loads(l)["misses"]["plan_unreadable"] for l in open(sys.argv[1])))' "$WORK/bad.stats")
hits=$(python3 -c 'import json,sys; print(sum(json.loads(l)["hits"] for l in open(sys.argv[1])))' "$WORK/bad.stats")
echo "badblocks/raw: $hits served, $unreadable unreadable"
[ "$unreadable" -gt 0 ] && [ "$hits" -gt 0 ] || fail "badblocks/raw: expected both served and unreadable"

# Entries past the end of the arena behind valid tables and checksum, in blocks
# that decode: the strict check refuses the plan with one line; the raw form
# serves the others and counts these as unreadable.
"$HOSTILE_PLAN" "$WORK/$name.good.plan" "$WORK/outside.plan" outside
set +e
"$MEMPLAN" replay -p "$WORK/outside.plan" -- "$PROGRAMS/pattern_threads" 4 20000 \
  >"$WORK/outside-cli.out" 2>"$WORK/outside-cli.err"
echo $? >"$WORK/outside-cli.rc"
MEMPLAN_MODE=replay MEMPLAN_PLAN="$WORK/outside.plan" MEMPLAN_STATS="$WORK/outside.stats" \
  LD_PRELOAD="$LIB" "$PROGRAMS/pattern_threads" 4 20000 >"$WORK/outside-raw.out" \
  2>"$WORK/outside-raw.err"
echo $? >"$WORK/outside-raw.rc"
set -e
for form in cli raw; do
  cmp -s "$WORK/$name.plain.out" "$WORK/outside-$form.out" || fail "outside/$form: output changed"
  cmp -s "$WORK/$name.plain.rc" "$WORK/outside-$form.rc" || fail "outside/$form: exit status changed"
done
[ "$(grep -c . "$WORK/outside-cli.err")" -eq 1 ] && grep -q "outside the arena" "$WORK/outside-cli.err" ||
  fail "outside/cli: expected one line about entries outside the arena, got: $(cat "$WORK/outside-cli.err")"
[ ! -s "$WORK/outside-raw.err" ] || fail "outside/raw: unexpected messages: $(cat "$WORK/outside-raw.err")"
unreadable=$(python3 -c 'import json,sys; print(sum(json.loads(l)["misses"]["plan_unreadable"] for l in open(sys.argv[1])))' "$WORK/outside.stats")
hits=$(python3 -c 'import json,sys; print(sum(json.loads(l)["hits"] for l in open(sys.argv[1])))' "$WORK/outside.stats")
echo "outside/raw: $hits served, $unreadable unreadable"
[ "$unreadable" -gt 0 ] && [ "$hits" -gt 0 ] || fail "outside/raw: expected both served and unreadable"

# A program that closes every descriptor it did not open (memplan's plan among
# them) and opens files of its own on the freed numbers: replay opens the plan
# again and goes on serving it; it never reads the program's files as plan.
name=fd_closer
run_plain "$name" "$PROGRAMS/fd_closer" 20000
run_record "$name" "$PROGRAMS/fd_closer" 20000
same_as_plain "$name" record
run_replay "$name" "$PROGRAMS/fd_closer" 20000
same_as_plain "$name" replay
no_memplan_messages "$name" replay
[ "$(stat_sum "$name" misses.plan_unreadable)" -eq 0 ] ||
  fail "$name: lost the plan when the program closed its descriptor"
hit_ratio_at_least "$name" 99
echo "hostile plans: ok"
