#!/usr/bin/env bash
# Eight recordings into the same plan file, started together: one at a time
# holds the file; one started while another holds it says so in one line and
# exits 1 without running its command, and the file left is a sound plan of
# a run of the command. (Recordings once all ran: each replaced the others'
# file as its processes ended, and the plan left mixed or dropped images, with
# at most a line from one of them; before that, a plan replaced by a
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
  ran=0 refused=0
  for i in $(seq 1 8); do
    status=0
    wait_deadline "${pids[$((i - 1))]}" 60 || status=$?
    if [ "$status" -eq 0 ]; then
      ran=$((ran + 1))
      cmp -s "$WORK/expected.out" "$WORK/r$i.out" || fail "round $round, recording $i: output changed"
      [ ! -s "$WORK/r$i.err" ] || fail "round $round, recording $i: $(cat "$WORK/r$i.err")"
    elif [ "$status" -eq 1 ]; then
      refused=$((refused + 1))
      [ ! -s "$WORK/r$i.out" ] || fail "round $round, recording $i: refused, yet its command ran"
      [ "$(cat "$WORK/r$i.err")" = "memplan: $WORK/same.plan: another memplan record is writing this plan now; wait for it, or choose another -o" ] ||
        fail "round $round, recording $i: $(cat "$WORK/r$i.err")"
    else
      fail "round $round, recording $i: status $status: $(head -c 300 "$WORK/r$i.err")"
    fi
  done
  [ "$ran" -ge 1 ] || fail "round $round: no recording ran"
  valid_plan "$WORK/same.plan" || fail "round $round: the plan left is not sound"
  "$MEMPLAN" show "$WORK/same.plan" >"$WORK/show.out" 2>&1
  grep -q "(1 process image;" "$WORK/show.out" || fail "round $round: $(head -3 "$WORK/show.out")"
  echo "round $round: $ran ran, $refused refused; the plan left is sound"
done
echo "concurrent recordings: ok"
