#!/usr/bin/env bash
# Eight recordings into the same plan file, started together: each one whose
# plan was replaced by a later one may say so, but none may claim that no
# process wrote a plan, and the file left is a sound plan. (memplan record
# once judged by the record id in the file alone: a plan replaced by a
# concurrent recording read as 'no process wrote a plan'.)
. "$(dirname "$0")/lib.sh"
need sort

seq 1 20000 | awk '{ print ($1 * 7919) % 20000 }' >"$WORK/in.txt"
sort -n "$WORK/in.txt" >"$WORK/expected.out"
for round in 1 2 3; do
  rm -f "$WORK/same.plan"
  pids=()
  for i in $(seq 1 8); do
    "$MEMPLAN" record -o "$WORK/same.plan" -- sort -n "$WORK/in.txt" \
      >"$WORK/r$i.out" 2>"$WORK/r$i.err" &
    pids+=($!)
  done
  for i in $(seq 1 8); do
    status=0
    wait_deadline "${pids[$((i - 1))]}" 60 || status=$?
    [ "$status" -eq 0 ] || fail "round $round, recording $i: status $status: $(head -c 300 "$WORK/r$i.err")"
    cmp -s "$WORK/expected.out" "$WORK/r$i.out" || fail "round $round, recording $i: output changed"
  done
  replaced=0
  for i in $(seq 1 8); do
    if grep -q "no process wrote a plan" "$WORK/r$i.err"; then
      fail "round $round, recording $i: $(cat "$WORK/r$i.err")"
    fi
    grep -q "replaced" "$WORK/r$i.err" && replaced=$((replaced + 1))
    # Nothing else may be said.
    if grep -v "replaced by another recording" "$WORK/r$i.err" | grep . >/dev/null; then
      fail "round $round, recording $i: $(cat "$WORK/r$i.err")"
    fi
  done
  valid_plan "$WORK/same.plan" || fail "round $round: the plan left is not sound"
  echo "round $round: $replaced of 8 said their plan was replaced; the plan left is sound"
done
echo "concurrent recordings: ok"
