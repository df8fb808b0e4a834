#!/usr/bin/env bash
# Every replay statistics line adds up: hits + the sum of the misses ==
# allocs, even when main returns while four threads are still allocating (the
# statistics are written as the process ends, in the middle of their calls).
# (Calls and misses were once counted apart, and hits derived from them, read
# at different moments: off by up to tens, in about a third of such runs.)
. "$(dirname "$0")/lib.sh"

# A plan of one run, replayed by 50 others (whose threads go further or less
# far), each appending its line to one statistics file.
run_record thr "$PROGRAMS/exit_threads" 30
grep -q returning "$WORK/thr.record.out" || fail "the recorded run failed: $(head -c 300 "$WORK/thr.record.err")"
valid_plan "$WORK/thr.plan" || fail "no sound plan"
for i in $(seq 1 50); do
  "$MEMPLAN" replay -p "$WORK/thr.plan" --stats "$WORK/all.stats" -- "$PROGRAMS/exit_threads" 30 \
    >"$WORK/thr.out" 2>"$WORK/thr.err" || fail "replay $i failed: $(head -c 300 "$WORK/thr.err")"
  grep -q returning "$WORK/thr.out" || fail "replay $i printed nothing"
done
python3 -S - "$WORK/all.stats" <<'PY' || fail "statistics lines that do not add up"
import json, sys
lines = bad = 0
for line in open(sys.argv[1]):
    d = json.loads(line)
    lines += 1
    misses = sum(d["misses"].values())
    if d["hits"] + misses != d["allocs"]:
        bad += 1
        print(f"line {lines}: allocs {d['allocs']} != hits {d['hits']} + misses {misses}"
              f" (off by {d['allocs'] - d['hits'] - misses})")
    elif d["hits"] == 0:
        print(f"line {lines}: no hits at all")
        bad += 1
print(f"{lines} statistics lines, {bad} wrong")
sys.exit(0 if lines == 50 and bad == 0 else 1)
PY
echo "statistics add up: ok"
