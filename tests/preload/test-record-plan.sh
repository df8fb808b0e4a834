#!/usr/bin/env bash
# The plan `memplan record` writes is the planner's, not only the linear packing
# the processes make at exit: on real programs its arena is within 2% of the
# peak of the plan's own blocks (no layout of them is smaller; pools, alive from
# their start on, can put that above the recorded lower bound, by 3% on this
# sqlite3 run), and within 5% of the recorded lower bound. It is a valid plan
# (memplan plan checks every layout it re-plans and keeps the smaller), and it
# still replays.
. "$(dirname "$0")/lib.sh"
need sqlite3 jq perl python3

{
  echo "CREATE TABLE t(id INTEGER PRIMARY KEY, k INTEGER, v TEXT);"
  echo "BEGIN;"
  awk 'BEGIN { for (i = 0; i < 20000; i++) printf "INSERT INTO t(k, v) VALUES (%d, \"v%d\");\n", (i * 7919) % 1000, i }'
  echo "COMMIT;"
  echo "CREATE INDEX tk ON t(k);"
  echo "SELECT k, count(*), max(v) FROM t GROUP BY k ORDER BY k LIMIT 20;"
} >"$WORK/script.sql"
awk 'BEGIN { print "["; for (i = 0; i < 20000; i++) printf "%s{\"a\":%d,\"b\":\"s%d\"}\n", (i ? "," : ""), i % 17, i; print "]" }' >"$WORK/data.json"

# within NAME: the recorded plan's arena against the peak of its blocks and the
# recorded lower bound, read from the summary line of a re-plan by the quick
# heuristics (sums over the images).
within() {
  local name=$1 line
  "$MEMPLAN" plan "$WORK/$name.plan" -o "$WORK/$name.check.plan" --time-limit 0 \
    2>"$WORK/$name.check.err" || fail "$name: memplan plan failed: $(cat "$WORK/$name.check.err")"
  line=$(cat "$WORK/$name.check.err")
  python3 -S - "$name" "$line" <<'PY' || fail "$name: $line"
import re, sys
name, line = sys.argv[1:3]
m = re.search(r"arena (\d+) -> \d+ bytes .*lower bound (\d+) .*peak of the plan's blocks (\d+)", line)
arena, lower, peak = (int(x) for x in m.groups())
print("%s: recorded arena %d, x%.4f its blocks' peak, x%.4f the lower bound"
      % (name, arena, arena / peak, arena / lower))
assert arena <= 1.02 * peak and arena <= 1.05 * lower
PY
}

check() {
  local name=$1; shift
  run_plain "$name" "$@"
  run_record "$name" "$@"
  same_as_plain "$name" record
  no_memplan_messages "$name" record
  within "$name"
  run_replay "$name" "$@"
  same_as_plain "$name" replay
  hit_ratio_at_least "$name" 90
}

check sqlite3 sqlite3 :memory: ".read $WORK/script.sql"
check jq jq -c '[.[] | select(.a > 8)] | length' "$WORK/data.json"
export PERL_HASH_SEED=0
check perl perl -e 'my %h; for my $i (1..200000) { $h{"k" . ($i % 5000)} .= "x" } print scalar(keys %h), "\n"'
unset PERL_HASH_SEED
check python3 python3 -c 'import json; d = [{"a": i, "b": str(i) * (i % 50)} for i in range(30000)]; print(len(json.dumps(d)))'
