#!/usr/bin/env bash
# A program that handles its crash on a small alternate signal stack, then
# raises the signal again from there, as CPython's faulthandler does: memplan's
# fatal-signal hook used to write the plan on what was left of that stack, and
# overflowed it (into the heap, under faulthandler: "malloc(): unsorted double
# linked list corrupted" in the program's output; below, into an unmapped page:
# no plan). It now works on a stack of its own: the program ends as plainly,
# with a sound plan, and replay writes its statistics.
. "$(dirname "$0")/lib.sh"

need python3
prog="$PROGRAMS/altstack_crash"
run_plain alt "$prog"
[ "$(rc alt plain)" -eq 139 ] || fail "altstack_crash did not end with SIGSEGV on its own: $(rc alt plain)"
grep -q "as reported by the program" "$WORK/alt.plain.err" || fail "the program's handler did not run"
record_cleanly alt "$prog"
recorded=$("$MEMPLAN" show --json "$WORK/alt.plan" |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["allocations"])')
[ "$recorded" -ge 20000 ] || fail "the plan holds $recorded allocations, not the program's 20,000"
run_replay alt "$prog"
same_as_plain alt replay
no_memplan_messages alt replay
[ "$(stat_sum "$WORK/alt.stats" hits)" -ge 20000 ] || fail "replay: no statistics from the crash"

# CPython's faulthandler, its report in a file, run with its stderr on a pipe.
script="$WORK/fault.py"
cat >"$script" <<PY
import faulthandler
report = open("$WORK/report.txt", "wb")
faulthandler.enable(report)
faulthandler._sigsegv()
PY
for mode in plain record replay; do
  case $mode in
    plain) cmd=(python3 -E "$script") ;;
    record) cmd=("$MEMPLAN" record -o "$WORK/py.plan" -- python3 -E "$script") ;;
    replay) cmd=("$MEMPLAN" replay -q -p "$WORK/py.plan" -- python3 -E "$script") ;;
  esac
  set +e
  "${cmd[@]}" 2>&1 </dev/null | cat >"$WORK/py.$mode.out"
  status=${PIPESTATUS[0]}
  set -e
  [ "$status" -eq 139 ] || fail "python3 under $mode: status $status, not 139: $(head -c 300 "$WORK/py.$mode.out")"
  [ ! -s "$WORK/py.$mode.out" ] || fail "python3 under $mode printed: $(head -c 300 "$WORK/py.$mode.out")"
  grep -q "Fatal Python error: Segmentation fault" "$WORK/report.txt" ||
    fail "python3 under $mode: no faulthandler report"
done
valid_plan "$WORK/py.plan" || fail "no sound plan from python3's crash"
echo "crashes handled on a small alternate stack: plans and statistics written, nothing overflowed"
