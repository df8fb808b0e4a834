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

# Frame sizes that say anything (each another plausible size, or the outermost
# mark): stack walks go astray, so calls are taken for other sites, or none,
# and served less; but a walk only ever reads the thread's own stack, and
# whatever site a call is taken for, the occupancy check keeps its block apart.
# replay_sizes NAME CMD...: NAME's good plan so made hostile, replayed.
replay_sizes() {
  local name=$1; shift
  "$HOSTILE_PLAN" "$WORK/$name.good.plan" "$WORK/$name.plan" sizes
  run_replay "$name" timeout 120 "$@"
  same_as_plain "$name" replay
  no_memplan_messages "$name" replay
  echo "$name/sizes: $(stat_sum "$name" hits) served, $(stat_sum "$name" unwinds) unwinds"
}
replay_sizes pattern_threads "$PROGRAMS/pattern_threads" 4 20000
replay_sizes family "$PROGRAMS/family" 5
# perl too: its interpreter's stacks are deep, and it allocates all along.
if command -v perl >/dev/null; then
  script='my %h; for my $i (1..30000) { $h{$i % 999} .= $i } print scalar(keys %h), "\n"'
  run_plain perl perl -e "$script"
  run_record perl perl -e "$script"
  cp "$WORK/perl.plan" "$WORK/perl.good.plan"
  replay_sizes perl perl -e "$script"
fi

# A longer run than the recorded one goes on in the sites' pools and tails,
# which the hostile plans move over each other and the entries too: still no
# overlap (pattern_threads checks every byte), and the busy ones refused.
name=pattern_threads
run_plain longer "$PROGRAMS/pattern_threads" 4 60000
for mode in zero shuffle; do
  "$HOSTILE_PLAN" "$WORK/$name.good.plan" "$WORK/longer.plan" $mode
  run_replay longer timeout 120 "$PROGRAMS/pattern_threads" 4 60000
  same_as_plain longer replay
  no_memplan_messages longer replay
  steady=$(stat_sum longer steady_hits)
  refused=$(( $(stat_sum longer misses.slot_busy) + $(stat_sum longer misses.pool_full) ))
  echo "longer/$mode: $(stat_sum longer hits) served ($steady by the steady state), $refused refused"
  [ "$refused" -gt 0 ] || fail "longer/$mode: the overlapping pools were never refused"
done
# Every site given a tail, sites of pools too, which a recording never gives
# one (a window holds the one or the other): a loop whose sites have pools
# (steady_loop checks every block it keeps) still goes on in them on a run 20
# times longer, with its output the same.
run_record loop "$PROGRAMS/steady_loop" 10000
"$HOSTILE_PLAN" "$WORK/loop.plan" "$WORK/tails.plan" tails
run_plain tails "$PROGRAMS/steady_loop" 200000
run_replay tails timeout 120 "$PROGRAMS/steady_loop" 200000
same_as_plain tails replay
no_memplan_messages tails replay
echo "tails: $(stat_sum tails hits) served ($(stat_sum tails steady_hits) by the steady state)"
[ "$(stat_sum tails steady_hits)" -gt 100000 ] || fail "tails: the pools did not serve the longer run"
# A plan whose tables and checksum pass but whose entries do not (MODE, made by
# hostile-plan): memplan replay's strict check refuses it with one line naming
# the problem (EXPECTED); the raw form, which checks entries as it reads them,
# serves the good ones and counts the others as unreadable.
LIB=$(dirname "$(dirname "$MEMPLAN")")/src/preload/libmemplan.so
name=pattern_threads
bad_entries() {
  local mode=$1 expected=$2
  "$HOSTILE_PLAN" "$WORK/$name.good.plan" "$WORK/$mode.plan" "$mode"
  set +e
  "$MEMPLAN" replay -p "$WORK/$mode.plan" -- "$PROGRAMS/pattern_threads" 4 20000 \
    >"$WORK/$mode-cli.out" 2>"$WORK/$mode-cli.err"
  echo $? >"$WORK/$mode-cli.rc"
  MEMPLAN_MODE=replay MEMPLAN_PLAN="$WORK/$mode.plan" MEMPLAN_STATS="$WORK/$mode.stats" \
    LD_PRELOAD="$LIB" "$PROGRAMS/pattern_threads" 4 20000 >"$WORK/$mode-raw.out" \
    2>"$WORK/$mode-raw.err"
  echo $? >"$WORK/$mode-raw.rc"
  set -e
  for form in cli raw; do
    cmp -s "$WORK/$name.plain.out" "$WORK/$mode-$form.out" || fail "$mode/$form: output changed"
    cmp -s "$WORK/$name.plain.rc" "$WORK/$mode-$form.rc" || fail "$mode/$form: exit status changed"
  done
  [ "$(grep -c . "$WORK/$mode-cli.err")" -eq 1 ] && grep -q "$expected" "$WORK/$mode-cli.err" ||
    fail "$mode/cli: expected one line saying '$expected', got: $(cat "$WORK/$mode-cli.err")"
  # The raw form says so too, once per process (pattern_threads is one).
  [ "$(grep -c . "$WORK/$mode-raw.err")" -eq 1 ] && grep -q "not served" "$WORK/$mode-raw.err" ||
    fail "$mode/raw: expected one line saying what is not served, got: $(cat "$WORK/$mode-raw.err")"
  local unreadable hits
  unreadable=$(python3 -c 'import json,sys; print(sum(json.loads(l)["misses"]["plan_unreadable"] for l in open(sys.argv[1])))' "$WORK/$mode.stats")
  hits=$(python3 -c 'import json,sys; print(sum(json.loads(l)["hits"] for l in open(sys.argv[1])))' "$WORK/$mode.stats")
  echo "$mode/raw: $hits served, $unreadable unreadable"
  [ "$unreadable" -gt 0 ] && [ "$hits" -gt 0 ] || fail "$mode/raw: expected both served and unreadable"
}
# Undecodable blocks.
bad_entries badblocks "are malformed"
# Blocks that decode, with entries past the end of the (shrunk) arena.
bad_entries outside "outside the arena"

# A program that closes every descriptor it did not open (memplan's plan among
# them) and opens files of its own on the freed numbers: replay opens the plan
# again and goes on serving it; it never reads the program's files as plan.
# With so few descriptors allowed, memplan keeps the plan on a low number
# (quiet_fd.c), which the program's own files then take (a replay that read
# that number without checking what it names read /dev/zero as plan, and left
# 8,193 of the 40,001 allocations unserved).
name=fd_closer
run_plain "$name" "$PROGRAMS/fd_closer" 20000
run_record "$name" "$PROGRAMS/fd_closer" 20000
same_as_plain "$name" record
(ulimit -n 24 && run_replay "$name" "$PROGRAMS/fd_closer" 20000)
same_as_plain "$name" replay
no_memplan_messages "$name" replay
[ "$(stat_sum "$name" misses.plan_unreadable)" -eq 0 ] ||
  fail "$name: lost the plan when the program closed its descriptor"
hit_ratio_at_least "$name" 99
echo "hostile plans: ok"
