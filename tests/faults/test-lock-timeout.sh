#!/usr/bin/env bash
# Another process holds the plan directory's lock and never lets go (stopped,
# even): a recording into that directory waits MEMPLAN_LOCK_SECONDS at most,
# says in one line that its plan is lost, and the program's output and status
# are unchanged. (The lock was once waited for without end.)
. "$(dirname "$0")/lib.sh"
need flock
# The program keeps its stderr open to the end; sort, which closes it, comes
# last.
prog=("$PROGRAMS/churn" 2000)
mkdir "$WORK/plans"
setsid flock "$WORK/plans" sleep 300 &
holder=$!
BG_GROUPS+=("$holder")
# Wait until the lock is taken, then stop its holder.
for _ in $(seq 100); do
  flock -n "$WORK/plans" true || break
  sleep 0.05
done
! flock -n "$WORK/plans" true || fail "the holder never took the lock"
kill -STOP -- "-$holder"

export MEMPLAN_LOCK_SECONDS=2
# check NAME MODE: done in time, the plain output, one line about the lock.
check() {
  local name=$1 mode=$2 took=$3
  [ "$(rc "$name" "$mode")" -ne 124 ] || fail "$name: still waiting for the lock after 30 s"
  same_as_plain "$name" "$mode"
  [ "$took" -le 8 ] || fail "$name: took $took s with MEMPLAN_LOCK_SECONDS=2"
  grep -q "memplan: .*lock" "$WORK/$name.$mode.err" ||
    fail "$name: no line about the lock: $(head -c 300 "$WORK/$name.$mode.err")"
  [ "$(grep -c 'memplan:' "$WORK/$name.$mode.err")" -eq 1 ] ||
    fail "$name: more than one memplan line: $(cat "$WORK/$name.$mode.err")"
  echo "$name ($took s): $(cat "$WORK/$name.$mode.err")"
}

run_plain cli "${prog[@]}"
start=$SECONDS
run cli record bounded 30 "$MEMPLAN" record -o "$WORK/plans/cli.plan" -- "${prog[@]}"
check cli record $((SECONDS - start))

run_plain raw "${prog[@]}"
start=$SECONDS
run raw record bounded 30 env MEMPLAN_MODE=record MEMPLAN_PLAN="$WORK/plans/raw.plan" \
  LD_PRELOAD="$LIB" "${prog[@]}"
check raw record $((SECONDS - start))

# sort closes its stderr before it exits, so the process cannot say why its
# plan is lost: memplan record says it for it, from the process's status line.
# (It once said nothing at all, and exited 0.)
if command -v sort >/dev/null; then
  seq 1000 | sort -r >"$WORK/sort.plain.out"; echo 0 >"$WORK/sort.plain.rc"
  start=$SECONDS
  run sort record bounded 30 sh -c 'seq 1000 | "$0" record -o "$1" -- sort -r' \
    "$MEMPLAN" "$WORK/plans/sort.plan"
  check sort record $((SECONDS - start))
fi

# Once the holder is gone, the same recording writes its plan.
kill -KILL -- "-$holder"
wait "$holder" 2>/dev/null || true
forget_group "$holder"
run_plain after "${prog[@]}"
run after record bounded 30 "$MEMPLAN" record -o "$WORK/plans/after.plan" -- "${prog[@]}"
same_as_plain after record
no_memplan_messages after record
valid_plan "$WORK/plans/after.plan" || fail "no plan once the lock was free"
echo "lock held by another process: ok"
