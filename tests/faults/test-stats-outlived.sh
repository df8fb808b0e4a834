#!/usr/bin/env bash
# memplan record and replay read their processes' statistics from a temporary
# file and remove it when the command ends. A process that starts after that
# (here a background job's `cat`, as a daemon's children would) must not make
# the file again: every such run used to leave one in $TMPDIR. A statistics
# file the user named is theirs, and such a process still writes its line.
. "$(dirname "$0")/lib.sh"

export TMPDIR="$WORK/tmp"
mkdir "$TMPDIR"
# The background job's cat starts once memplan (the shell's parent) has ended.
late='(while kill -0 $PPID 2>/dev/null; do sleep 0.05; done; cat /dev/null) & echo started'

# until_group_ends CMD...: runs CMD in a process group of its own and waits for
# every process of the group to end (10 s at most), not only for CMD.
until_group_ends() {
  local pid i
  setsid "$@" >"$WORK/out" 2>"$WORK/err" &
  pid=$!
  BG_GROUPS+=("$pid")
  wait "$pid" || fail "$* failed: $(head -c 300 "$WORK/err")"
  for ((i = 0; i < 200; i++)); do
    kill -0 -- "-$pid" 2>/dev/null || break
    sleep 0.05
  done
  ! kill -0 -- "-$pid" 2>/dev/null || fail "$*: its background job did not end"
  forget_group "$pid"
  [ "$(cat "$WORK/out")" = started ] || fail "$*: printed $(head -c 200 "$WORK/out")"
  ! grep -q 'memplan:' "$WORK/err" || fail "$*: memplan said $(head -c 300 "$WORK/err")"
}

# memplan record and replay wait for what their command left running: not
# here, where the job waits for memplan to end (test-record-left.sh tests the
# wait).
until_group_ends "$MEMPLAN" record --wait-left 0 -o "$WORK/late.plan" -- sh -c "$late"
[ -z "$(ls -A "$TMPDIR")" ] || fail "record left files behind: $(ls -A "$TMPDIR")"
grep -q '"exe":"[^"]*/cat"' <("$MEMPLAN" show --json "$WORK/late.plan") ||
  fail "the late process's image is not in the plan"

until_group_ends "$MEMPLAN" replay -q --wait-left 0 -p "$WORK/late.plan" -- sh -c "$late"
[ -z "$(ls -A "$TMPDIR")" ] || fail "replay left files behind: $(ls -A "$TMPDIR")"

until_group_ends "$MEMPLAN" replay -q --wait-left 0 -p "$WORK/late.plan" --stats "$WORK/user.stats" -- \
  sh -c "$late"
grep -q '"exe":"[^"]*/cat"' "$WORK/user.stats" ||
  fail "no line from the late process in the user's statistics: $(cat "$WORK/user.stats")"
echo "no statistics file outlives memplan record or replay; the user's still gets every line"
