#!/usr/bin/env bash
# Replay statistics sent to a FIFO that no process reads: the program still
# finishes at once, with its plain output, and memplan says in a line that it
# cannot write there. (Opening the FIFO at exit once waited for a reader
# forever.)
. "$(dirname "$0")/lib.sh"
need sort

seq 1 5000 | awk '{ print ($1 * 37) % 5000 }' >"$WORK/in.txt"
run_plain sort sort -n "$WORK/in.txt"
"$MEMPLAN" record -o "$WORK/sort.plan" -- sort -n "$WORK/in.txt" >/dev/null || fail "cannot record sort"
mkfifo "$WORK/stats.fifo"

# check NAME: finished within the deadline, plain output, a line about the FIFO.
check() {
  local name=$1
  [ "$(rc "$name" "$2")" -ne 124 ] || fail "$name: still running after 20 s (hung on the FIFO)"
  same_as_plain "$name" "$2"
  grep -q "memplan: .*stats.fifo" "$WORK/$name.$2.err" ||
    fail "$name: no memplan line about the FIFO: $(head -c 300 "$WORK/$name.$2.err")"
  echo "$name: $(grep 'memplan:' "$WORK/$name.$2.err" | head -1)"
}

cp "$WORK/sort.plain.out" "$WORK/cli.plain.out"; cp "$WORK/sort.plain.rc" "$WORK/cli.plain.rc"
start=$SECONDS
run cli replay bounded 20 "$MEMPLAN" replay -p "$WORK/sort.plan" --stats "$WORK/stats.fifo" -- sort -n "$WORK/in.txt"
check cli replay

cp "$WORK/sort.plain.out" "$WORK/raw.plain.out"; cp "$WORK/sort.plain.rc" "$WORK/raw.plain.rc"
run raw replay bounded 20 env MEMPLAN_MODE=replay MEMPLAN_PLAN="$WORK/sort.plan" \
  MEMPLAN_STATS="$WORK/stats.fifo" LD_PRELOAD="$LIB" sort -n "$WORK/in.txt"
check raw replay
[ $((SECONDS - start)) -le 10 ] || fail "the two runs took $((SECONDS - start)) s"
echo "statistics to a FIFO: ok"
