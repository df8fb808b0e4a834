# Shared helpers for the fault suite. Each test sources this file. meson passes
# MEMPLAN (the CLI), LIB (libmemplan.so), PROGRAMS (this suite's programs),
# PLAN_CHECK (validates a plan) and PLAN_DEPTH (rewrites a plan's depth).
# Pointing MEMPLAN and LIB at another build runs the same tests against it:
# a build from before the fixes fails them (test-kill-write excepted).
set -euo pipefail

: "${MEMPLAN:?MEMPLAN must name the memplan CLI}"
: "${LIB:?LIB must name libmemplan.so}"
: "${PROGRAMS:?PROGRAMS must name the directory of the fault programs}"
[ -x "$MEMPLAN" ] || { echo "FAIL: $MEMPLAN is not executable" >&2; exit 1; }
[ -f "$LIB" ] || { echo "FAIL: $LIB not found" >&2; exit 1; }
# The CLI preloads the same library.
export MEMPLAN_PRELOAD="$LIB"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/memplan-fault.XXXXXX")
# On exit, whatever state the test left them in: background jobs of the test's
# shell still running are killed, and so is whatever is left of the process
# groups in BG_GROUPS (commands started under setsid, whose processes may
# outlive the one the shell waited for; forget_group drops a group the test
# has ended itself).
BG_GROUPS=()
forget_group() {
  local g keep=()
  for g in "${BG_GROUPS[@]}"; do
    [ "$g" = "$1" ] || keep+=("$g")
  done
  BG_GROUPS=("${keep[@]}")
}
# Mount points a test made, unmounted on exit before $WORK is removed.
MOUNTS=()
cleanup() {
  local p
  for p in $(jobs -p); do
    kill -CONT "$p" 2>/dev/null || true
    kill -KILL "$p" 2>/dev/null || true
  done
  for p in "${BG_GROUPS[@]}"; do
    kill -KILL -- "-$p" 2>/dev/null || true
  done
  for p in "${MOUNTS[@]}"; do
    umount "$p" 2>/dev/null || umount -l "$p" 2>/dev/null || true
  done
  rm -rf "$WORK"
}
trap cleanup EXIT

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# Skips the test (exit 77) unless every named program is installed.
need() {
  for p in "$@"; do
    command -v "$p" >/dev/null || { echo "SKIP: $p not installed"; exit 77; }
  done
}

# run NAME MODE CMD...: CMD's stdout to $WORK/NAME.MODE.out, stderr to .err,
# exit status to .rc (never stops the test).
run() {
  local name=$1 mode=$2; shift 2
  set +e
  "$@" >"$WORK/$name.$mode.out" 2>"$WORK/$name.$mode.err"
  echo $? >"$WORK/$name.$mode.rc"
  set -e
}
# bounded SECS CMD...: runs CMD in a process group of its own with a deadline:
# the status is CMD's, or 124 if it was still running after SECS seconds. Then
# whatever is left of the group is killed: a hung process (or one a signal did
# not reach) never outlives the test.
bounded() {
  local secs=$1 pid r=0
  shift
  setsid timeout -k 2 "$secs" "$@" <&0 &
  pid=$!
  BG_GROUPS+=("$pid")
  wait "$pid" || r=$?
  kill -KILL -- "-$pid" 2>/dev/null || true
  forget_group "$pid"
  return $r
}

# wait_deadline PID SECS: waits for the background job PID and returns its
# status; if it is still running after SECS seconds, kills it and returns 124.
wait_deadline() {
  local pid=$1 secs=$2 i r=0
  for ((i = 0; i < secs * 20; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  if kill -0 "$pid" 2>/dev/null; then
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    return 124
  fi
  wait "$pid" || r=$?
  return $r
}

run_plain() { local n=$1; shift; run "$n" plain "$@"; }
run_record() { local n=$1; shift; run "$n" record "$MEMPLAN" record -o "$WORK/$n.plan" -- "$@"; }
run_replay() {
  local n=$1; shift
  rm -f "$WORK/$n.stats"
  run "$n" replay "$MEMPLAN" replay -p "$WORK/$n.plan" --stats "$WORK/$n.stats" -- "$@"
}
rc() { cat "$WORK/$1.$2.rc"; }

# same_as_plain NAME MODE: output and exit status of MODE equal the plain run's.
same_as_plain() {
  local name=$1 mode=$2
  cmp -s "$WORK/$name.plain.out" "$WORK/$name.$mode.out" ||
    fail "$name: $mode output differs from the plain run (rc $(rc "$name" "$mode"); stderr: $(head -c 300 "$WORK/$name.$mode.err"))"
  [ "$(rc "$name" plain)" = "$(rc "$name" "$mode")" ] ||
    fail "$name: $mode exit status $(rc "$name" "$mode") != plain $(rc "$name" plain) (stderr: $(head -c 300 "$WORK/$name.$mode.err"))"
}

# no_memplan_messages NAME MODE: memplan said nothing (it speaks only on errors).
no_memplan_messages() {
  if grep -q 'memplan:' "$WORK/$1.$2.err"; then
    fail "$1: memplan complained during $2: $(grep 'memplan:' "$WORK/$1.$2.err" | head -3)"
  fi
}

# valid_plan PLAN: the plan file exists and reads as a sound plan: checked by
# plan-check (quick), or, for a plan of another format version than this
# tree's (a build from before a format change), by the tested build's own
# memplan show.
valid_plan() {
  local r=0
  [ -f "$1" ] || return 1
  if [ -n "${PLAN_CHECK:-}" ]; then
    "$PLAN_CHECK" "$1" >/dev/null 2>&1 || r=$?
    [ "$r" -eq 3 ] || return "$r"
  fi
  "$MEMPLAN" show --json "$1" >/dev/null 2>&1
}

# record_cleanly NAME CMD...: records CMD, which must print and end as its
# plain run did (run_plain NAME first), without a word from memplan, into a
# sound plan at $WORK/NAME.plan.
record_cleanly() {
  local name=$1
  run_record "$@"
  same_as_plain "$name" record
  no_memplan_messages "$name" record
  valid_plan "$WORK/$name.plan" || fail "$name: no sound plan"
}

# absent_or_valid PLAN: nothing at all, or a sound plan (never a torn file).
absent_or_valid() {
  [ ! -e "$1" ] || valid_plan "$1"
}

# stat_sum FILE KEY: the sum of KEY (a.b for nested keys) over FILE's JSON lines.
stat_sum() {
  python3 -S -c '
import json, sys
total = 0
for line in open(sys.argv[1]):
    d = json.loads(line)
    for k in sys.argv[2].split("."):
        d = d[k]
    total += d
print(total)' "$1" "$2"
}
