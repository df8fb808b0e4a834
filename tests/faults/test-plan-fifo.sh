#!/usr/bin/env bash
# A plan path that names a FIFO: `memplan record -o FIFO` refuses it at once
# (status 1, one line), and the raw form runs the program to its end, with its
# plain output, saying it does not record. Replay from a FIFO runs the program
# on libc. (Opening the FIFO once waited for a reader forever.)
. "$(dirname "$0")/lib.sh"
need sort

seq 1 5000 | awk '{ print ($1 * 37) % 5000 }' >"$WORK/in.txt"
mkfifo "$WORK/plan.fifo"
for name in cli raw raw-replay cli-replay; do
  run_plain $name sort -n "$WORK/in.txt"
done

run cli record bounded 20 "$MEMPLAN" record -o "$WORK/plan.fifo" -- sort -n "$WORK/in.txt"
[ "$(rc cli record)" -ne 124 ] || fail "memplan record -o FIFO: still running after 20 s"
[ "$(rc cli record)" -eq 1 ] || fail "memplan record -o FIFO: status $(rc cli record), not 1"
[ ! -s "$WORK/cli.record.out" ] || fail "memplan record -o FIFO ran the command all the same"
grep -q "^memplan: .*plan.fifo" "$WORK/cli.record.err" ||
  fail "memplan record -o FIFO: no line about it: $(head -c 300 "$WORK/cli.record.err")"
echo "cli: $(cat "$WORK/cli.record.err")"

# The raw form: the program itself must not wait on the FIFO, at start or exit.
run raw record bounded 20 env MEMPLAN_MODE=record MEMPLAN_PLAN="$WORK/plan.fifo" \
  LD_PRELOAD="$LIB" sort -n "$WORK/in.txt"
[ "$(rc raw record)" -ne 124 ] || fail "raw record into a FIFO: still running after 20 s"
same_as_plain raw record
grep -q "memplan: .*plan.fifo" "$WORK/raw.record.err" ||
  fail "raw record into a FIFO: no memplan line about it"
echo "raw: $(grep 'memplan:' "$WORK/raw.record.err" | head -1)"

run raw-replay replay bounded 20 env MEMPLAN_MODE=replay MEMPLAN_PLAN="$WORK/plan.fifo" \
  LD_PRELOAD="$LIB" sort -n "$WORK/in.txt"
[ "$(rc raw-replay replay)" -ne 124 ] || fail "raw replay from a FIFO: still running after 20 s"
same_as_plain raw-replay replay
run cli-replay replay bounded 20 "$MEMPLAN" replay -p "$WORK/plan.fifo" -- sort -n "$WORK/in.txt"
[ "$(rc cli-replay replay)" -ne 124 ] || fail "memplan replay -p FIFO: still running after 20 s"
same_as_plain cli-replay replay
echo "plan path on a FIFO: ok"
