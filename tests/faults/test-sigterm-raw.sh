#!/usr/bin/env bash
# SIGTERM to a recording program that spends its time in malloc and free: every
# time, the plan is written (a sound file) and the program ends by SIGTERM
# (status 143). (A signal that arrived while the thread was inside memplan
# once left no plan: memplan gave up rather than write half-updated tables.)
. "$(dirname "$0")/lib.sh"

for i in $(seq 0 9); do
  delay=$(awk -v i=$i 'BEGIN { printf "%.2f", 0.2 + i * 0.6 / 9 }')
  plan="$WORK/term$i.plan"
  MEMPLAN_MODE=record MEMPLAN_PLAN="$plan" LD_PRELOAD="$LIB" \
    "$PROGRAMS/churn" forever >"$WORK/term$i.out" 2>"$WORK/term$i.err" &
  pid=$!
  sleep "$delay"
  kill -TERM "$pid"
  # The plan is written before the program ends; give it 30 s at most.
  status=0
  wait_deadline "$pid" 30 || status=$?
  [ "$status" -eq 143 ] || fail "run $i (SIGTERM after $delay s): status $status, not 143: $(head -c 300 "$WORK/term$i.err")"
  grep -q running "$WORK/term$i.out" || fail "run $i: the program never ran"
  valid_plan "$plan" || fail "run $i (SIGTERM after $delay s): no sound plan ($( [ -e "$plan" ] && echo corrupt || echo missing)); stderr: $(head -c 300 "$WORK/term$i.err")"
  echo "run $i: SIGTERM after $delay s: status 143, plan of $(stat -c %s "$plan") bytes"
  rm -f "$plan"
done
echo "SIGTERM while allocating: ok"

# Two SIGTERMs at once (a process group signalled, and the signal passed on
# too): the second must wait for the plan the first is writing. (The handler
# once ran once, SA_RESETHAND: the second took the default action and the
# plan was lost in 4 to 8 runs of 20.)
for i in $(seq 0 19); do
  plan="$WORK/twice$i.plan"
  MEMPLAN_MODE=record MEMPLAN_PLAN="$plan" LD_PRELOAD="$LIB" \
    "$PROGRAMS/churn" forever >"$WORK/twice$i.out" 2>"$WORK/twice$i.err" &
  pid=$!
  for _ in $(seq 100); do
    grep -q running "$WORK/twice$i.out" && break
    sleep 0.02
  done
  sleep 0.$((i % 5))
  # The second may find the process gone already: its plan was quick to write.
  kill -TERM "$pid"; kill -TERM "$pid" 2>/dev/null || true
  status=0
  wait_deadline "$pid" 30 || status=$?
  [ "$status" -eq 143 ] || fail "twice $i: status $status, not 143: $(head -c 300 "$WORK/twice$i.err")"
  valid_plan "$plan" || fail "twice $i: two SIGTERMs left no sound plan ($( [ -e "$plan" ] && echo corrupt || echo missing))"
  rm -f "$plan"
done
echo "two SIGTERMs at once, 20 runs: a plan every time"
