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

# A command that a signal ended: memplan ends by the same signal, as the
# command would have ended its caller's wait, not by exit status 128 + N. (A
# shell stops its loop at a child ^C ended, not at one that exited 130;
# Python's subprocess gave 143 where it gives -15.)
for mode in record replay; do
  if [ "$mode" = record ]; then plan_option=-o; else plan_option=-p; fi
  python3 -S - "$MEMPLAN" "$mode" "$plan_option" "$WORK/term.plan" <<'PY' ||
import subprocess, sys
memplan, mode, option, plan = sys.argv[1:]
r = subprocess.run([memplan, mode, option, plan, "--", "sh", "-c", "kill -TERM $$"],
                   stderr=subprocess.DEVNULL)
assert r.returncode == -15, "returncode %d, not -15" % r.returncode
PY
    fail "$mode: memplan did not end by the command's SIGTERM"
done
echo "memplan ends by the signal that ended its command"

# ^C at a terminal reaches the whole foreground process group, the command
# included: memplan does not pass it on a second time. (A second SIGINT cut
# short the command's clean-up after KeyboardInterrupt: 9 runs in 10 under
# replay.)
cat >"$WORK/clean.py" <<'PY'
import sys, time
try:
    print("ready", flush=True)
    time.sleep(30)
except KeyboardInterrupt:
    time.sleep(0.3)
    print("cleaned up", flush=True)
    sys.exit(3)
PY
# Record first: its runs write the plan that replay's use.
for mode in record replay; do
  python3 -S - "$MEMPLAN" "$mode" "$WORK/clean.plan" "$WORK/clean.py" <<'PY' ||
import os, pty, sys, time
memplan, mode, plan, script = sys.argv[1:]
# Fewer under record, whose plan of python3 takes seconds to finish.
runs, options = (3, ["-o", plan, "--plan-seconds", "0"]) if mode == "record" else (8, ["-p", plan])
for run in range(runs):
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp(memplan, [memplan, mode] + options + ["--", "python3", script])
    out = b""
    while b"ready" not in out:
        out += os.read(fd, 1024)
    os.write(fd, b"\x03")
    try:
        while True:
            chunk = os.read(fd, 1024)
            if not chunk:
                break
            out += chunk
    except OSError:
        pass
    _, status = os.waitpid(pid, 0)
    assert b"cleaned up" in out and os.WEXITSTATUS(status) == 3, \
        "run %d: status %#x, output %r" % (run, status, out)
PY
    fail "$mode: ^C reached the command twice"
done
echo "^C reaches the command once"

# Children ended by SIGTERM as they start, under record: no temporary file is
# left beside the plan. (The check that the plan's directory is writable made
# and removed an empty file before memplan's handler was in place: 9 children
# in 100 left one.)
mkdir "$WORK/starts"
cat >"$WORK/starts/spawn.py" <<'PY'
import subprocess, time
for delay in [0.001, 0.002, 0.003] * 20:
    p = subprocess.Popen(["sleep", "2"])
    time.sleep(delay)
    p.terminate()
    p.wait()
PY
"$MEMPLAN" record --plan-seconds 0 -o "$WORK/starts/spawn.plan" -- python3 "$WORK/starts/spawn.py" ||
  fail "recording the spawning script failed"
left=$(find "$WORK/starts" -name '*.tmp.*')
[ -z "$left" ] || fail "temporary files left beside the plan: $left"
echo "children ended as they start leave no temporary file"
