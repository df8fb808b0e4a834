#!/usr/bin/env bash
# How deep a call site should be: for each depth, the recording's wall time and
# site count, and the share of allocations replay serves from the arena, both on
# the recorded input and on a different one (divergence). Prints a Markdown table.
# usage: scripts/bench/depth.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
memplan=$build/tools/memplan
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

sql() { # N SEED: a SQL script with N inserts
  awk -v n="$1" -v s="$2" 'BEGIN { print "CREATE TABLE t(a, b); BEGIN;"; x = s
    for (i = 0; i < n; i++) { x = (x * 1103515245 + 12345) % 2147483648; printf "INSERT INTO t VALUES (%d, \"v%d\");\n", x % 997, x }
    print "COMMIT; CREATE INDEX ta ON t(a); SELECT a, count(*) FROM t GROUP BY a ORDER BY 2 DESC LIMIT 3;" }'
}
cat >"$work/py.py" <<'PY'
import json, sys
n = int(sys.argv[1])
data = [{"id": i, "name": "n%d" % (i * 7919 % n), "tags": ["t%d" % (i % 13)] * (i % 5)} for i in range(n)]
s = json.dumps(data)
print(len(s), len(json.loads(s)))
PY

# hit_share STATS: served / allocation calls, over all images, as a percentage.
hit_share() {
  python3 -S -c '
import json, sys
h = a = 0
for line in open(sys.argv[1]):
    d = json.loads(line); h += d["hits"]; a += d["allocs"]
print("%.1f" % (100.0 * h / max(a, 1)))' "$1"
}

echo "| depth | program | record s | sites | same input: served | other input: served |"
echo "|---|---|---|---|---|---|"
for depth in 1 2 4 6 8 12 16; do
  for prog in sqlite3 python3; do
    case $prog in
    sqlite3) sql 30000 1 >"$work/in.sql"; cmd=(sqlite3 :memory: ".read $work/in.sql") ;;
    python3) cmd=(python3 "$work/py.py" 30000) ;;
    esac
    start=$(date +%s.%N)
    "$memplan" record --depth "$depth" -o "$work/p.plan" -- "${cmd[@]}" >/dev/null
    secs=$(echo "$(date +%s.%N) - $start" | bc)
    sites=$("$memplan" show --json "$work/p.plan" | python3 -S -c 'import json,sys; print(json.load(sys.stdin)["sites"])')
    rm -f "$work/s.jsonl"
    "$memplan" replay -p "$work/p.plan" --stats "$work/s.jsonl" -- "${cmd[@]}" >/dev/null
    same=$(hit_share "$work/s.jsonl")
    case $prog in
    sqlite3) sql 40000 2 >"$work/in.sql" ;;
    python3) sed -i 's/range(n)/range(n + n \/\/ 3)/' "$work/py.py" ;;
    esac
    rm -f "$work/s.jsonl"
    "$memplan" replay -p "$work/p.plan" --stats "$work/s.jsonl" -- "${cmd[@]}" >/dev/null
    other=$(hit_share "$work/s.jsonl")
    [ "$prog" = python3 ] && sed -i 's/range(n + n \/\/ 3)/range(n)/' "$work/py.py"
    printf '| %s | %s | %.2f | %s | %s%% | %s%% |\n' "$depth" "$prog" "$secs" "$sites" "$same" "$other"
  done
done
