# Shared helpers for the preload tests. Each test sources this file; meson passes
# MEMPLAN (the CLI), PROGRAMS (purpose-built test programs) and PLAN_DIGEST.
set -euo pipefail
# One locale wherever the tests run: without one, sort and others allocate
# differently (sort makes 12 allocations of 5,000 numbers in the C locale,
# 222 in C.UTF-8, which glibc always has).
export LC_ALL=C.UTF-8

: "${MEMPLAN:?MEMPLAN must name the memplan CLI}"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/memplan-test.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

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

# run_plain NAME CMD...: output to $WORK/NAME.plain.out, status to $WORK/NAME.plain.rc
run_plain() {
  local name=$1; shift
  set +e; "$@" >"$WORK/$name.plain.out" 2>"$WORK/$name.plain.err"; echo $? >"$WORK/$name.plain.rc"; set -e
}

run_record() {
  local name=$1; shift
  set +e; "$MEMPLAN" record -o "$WORK/$name.plan" -- "$@" >"$WORK/$name.record.out" 2>"$WORK/$name.record.err"
  echo $? >"$WORK/$name.record.rc"; set -e
}

run_replay() {
  local name=$1; shift
  rm -f "$WORK/$name.stats"
  set +e; "$MEMPLAN" replay -p "$WORK/$name.plan" --stats "$WORK/$name.stats" -- "$@" \
    >"$WORK/$name.replay.out" 2>"$WORK/$name.replay.err"
  echo $? >"$WORK/$name.replay.rc"; set -e
}

# same_as_plain NAME MODE: output and exit status of MODE equal the plain run's.
same_as_plain() {
  local name=$1 mode=$2
  cmp -s "$WORK/$name.plain.out" "$WORK/$name.$mode.out" ||
    fail "$name: $mode output differs from the plain run"
  cmp -s "$WORK/$name.plain.rc" "$WORK/$name.$mode.rc" ||
    fail "$name: $mode exit status $(cat "$WORK/$name.$mode.rc") != plain $(cat "$WORK/$name.plain.rc")"
}

# same_stderr_as_plain NAME MODE: the program's own messages under MODE (its
# stderr without memplan's lines) equal the plain run's. Output can match while
# the program complains: node's threads of 64 KiB once failed under memplan,
# and node printed "pthread_create: Invalid argument", then the right answer.
same_stderr_as_plain() {
  local name=$1 mode=$2
  grep -v '^memplan[: ]' "$WORK/$name.$mode.err" >"$WORK/$name.$mode.err.own" || true
  cmp -s "$WORK/$name.plain.err" "$WORK/$name.$mode.err.own" ||
    fail "$name: $mode printed other messages than the plain run: $(diff "$WORK/$name.plain.err" "$WORK/$name.$mode.err.own" | head -4)"
}

# no_stderr_noise NAME MODE: memplan said nothing (it speaks only on errors).
no_memplan_messages() {
  local name=$1 mode=$2
  if grep -q '^memplan:' "$WORK/$name.$mode.err"; then
    fail "$name: memplan complained during $mode: $(grep '^memplan:' "$WORK/$name.$mode.err" | head -3)"
  fi
}

# stat_sum NAME KEY: the sum of KEY over the stats lines of NAME's replay.
stat_sum() {
  python3 -S -c '
import json, sys
total = 0
for line in open(sys.argv[1]):
    d = json.loads(line)
    v = d
    for k in sys.argv[2].split("."):
        v = v[k]
    total += v
print(total)' "$WORK/$1.stats" "$2"
}

# hit_ratio_at_least NAME PERCENT: allocations served from the arena, of all
# allocation calls, over all images with a plan.
hit_ratio_at_least() {
  local name=$1 pct=$2 hits allocs
  hits=$(stat_sum "$name" hits)
  allocs=$(python3 -S -c '
import json, sys
print(sum(json.loads(l)["allocs"] for l in open(sys.argv[1]) if json.loads(l)["planned"] or json.loads(l)["pools"]))' "$WORK/$name.stats")
  [ "$allocs" -gt 0 ] || fail "$name: no image with a plan in the replay stats"
  [ $((hits * 100)) -ge $((allocs * pct)) ] ||
    fail "$name: only $hits of $allocs allocations served from the arena (< $pct%)"
  echo "$name: $hits of $allocs allocations served from the arena"
}
