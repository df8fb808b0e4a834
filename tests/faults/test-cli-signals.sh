#!/usr/bin/env bash
# memplan record passes SIGTERM on to the command and waits for it: when
# `timeout` (or kill) ends memplan, the command has ended too and its plan is
# complete at that moment, and memplan's status is the command's (143). (The
# CLI once died at once, leaving the command running, or writing its plan
# after memplan had returned.)
#
# timeout runs with --foreground first, so that memplan alone gets its SIGTERM
# and the command exactly one copy, the one memplan passes on; then without
# it, as timeout is mostly used: it also signals its whole process group, and
# the command gets two SIGTERMs microseconds apart (test-sigterm-raw checks
# that case on a raw recording).
. "$(dirname "$0")/lib.sh"
need timeout pgrep

# left TAG: the churn processes of this test run still alive.
left() { pgrep -f "churn forever $1" || true; }

for i in 1 2 3 4 5 6; do
  tag="cli-timeout-$$-$i"
  plan="$WORK/timeout$i.plan"
  foreground=--foreground
  [ "$i" -le 3 ] || foreground=
  setsid timeout $foreground 1 "$MEMPLAN" record -o "$plan" -- "$PROGRAMS/churn" forever "$tag" \
    >"$WORK/timeout$i.out" 2>"$WORK/timeout$i.err" &
  group=$!
  BG_GROUPS+=("$group")
  status=0
  wait_deadline "$group" 30 || status=$?
  # At once: no waiting for a command that may still be writing.
  valid=yes
  valid_plan "$plan" || valid=no
  alive=$(left "$tag")
  kill -KILL -- "-$group" 2>/dev/null || true
  forget_group "$group"
  [ -z "$alive" ] || fail "timeout $i: the command is still running after memplan returned (pid $alive)"
  [ "$status" -eq 124 ] || fail "timeout $i: status $status, not 124: $(head -c 300 "$WORK/timeout$i.err")"
  [ $valid = yes ] || fail "timeout $i: no sound plan when timeout returned: $(head -c 300 "$WORK/timeout$i.err")"
  echo "timeout $i: ok, plan of $(stat -c %s "$plan") bytes"
  rm -f "$plan"
done

for i in 1 2 3; do
  tag="cli-kill-$$-$i"
  plan="$WORK/kill$i.plan"
  setsid "$MEMPLAN" record -o "$plan" -- "$PROGRAMS/churn" forever "$tag" \
    >"$WORK/kill$i.out" 2>"$WORK/kill$i.err" &
  pid=$!
  BG_GROUPS+=("$pid")
  for _ in $(seq 100); do
    grep -q running "$WORK/kill$i.out" && break
    sleep 0.05
  done
  sleep 0.3
  kill -TERM "$pid"
  status=0
  wait_deadline "$pid" 30 || status=$?
  valid=yes
  valid_plan "$plan" || valid=no
  alive=$(left "$tag")
  kill -KILL -- "-$pid" 2>/dev/null || true
  forget_group "$pid"
  [ -z "$alive" ] || fail "kill $i: the command is still running after memplan returned (pid $alive)"
  [ "$status" -eq 143 ] || fail "kill $i: memplan's status $status, not 143: $(head -c 300 "$WORK/kill$i.err")"
  [ $valid = yes ] || fail "kill $i: no sound plan when memplan returned: $(head -c 300 "$WORK/kill$i.err")"
  echo "kill $i: ok, plan of $(stat -c %s "$plan") bytes"
  rm -f "$plan"
done
echo "SIGTERM through the CLI: ok"

# memplan itself killed outright (SIGKILL, as `timeout -s KILL` or a supervisor
# does) takes its command with it, as if memplan were not there. (Once the
# command ran on alone, orphaned.)
for mode in record replay; do
  rm -f "$WORK/cmd.pid"
  if [ "$mode" = record ]; then
    "$MEMPLAN" record -o "$WORK/killed.plan" -- sh -c "echo \$\$ >'$WORK/cmd.pid'; exec sleep 60" &
  else
    "$MEMPLAN" replay -p "$WORK/killed.plan" -- sh -c "echo \$\$ >'$WORK/cmd.pid'; exec sleep 60" 2>/dev/null &
  fi
  cli=$!
  for _ in $(seq 1 100); do [ -s "$WORK/cmd.pid" ] && break; sleep 0.1; done
  [ -s "$WORK/cmd.pid" ] || fail "$mode: the command did not start"
  kill -KILL "$cli"
  wait "$cli" 2>/dev/null || true
  cmd=$(cat "$WORK/cmd.pid")
  for _ in $(seq 1 50); do kill -0 "$cmd" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$cmd" 2>/dev/null; then
    kill -KILL "$cmd"
    fail "$mode: the command outlived memplan killed by SIGKILL"
  fi
done
echo "memplan killed by SIGKILL takes its command with it"
