#!/usr/bin/env bash
# A plan truncated (`: > plan`) or rewritten in place (`cat other > plan`) while
# a program replays it: the program runs on, with the plain run's output and
# status. (Replay once read the plan through a file mapping long after
# start-up: SIGBUS, status 135.) A process of a command that starts once its
# plan is cut finds it unreadable: it runs on libc and still writes its
# statistics line, so the summary counts it and --strict fails.
. "$(dirname "$0")/lib.sh"
need sqlite3 sort python3

# Three sorts in a script that cuts its plan before the third (a builtin
# does, so that no other process starts meanwhile).
seq 1 3000 | awk '{ print ($1 * 31) % 3000 }' >"$WORK/in.txt"
cat >"$WORK/three.sh" <<EOF
sort -n "$WORK/in.txt"
sort -rn "$WORK/in.txt"
if [ -n "\${CUT:-}" ]; then : >"$WORK/three.plan"; fi
sort -n "$WORK/in.txt"
EOF
run three plain sh "$WORK/three.sh"
"$MEMPLAN" record -o "$WORK/three.plan" -- sh "$WORK/three.sh" >/dev/null ||
  fail "cannot record the three sorts"
CUT=1 run three replay "$MEMPLAN" replay --strict -p "$WORK/three.plan" \
  --stats "$WORK/three.stats" -- sh "$WORK/three.sh"
cmp -s "$WORK/three.plain.out" "$WORK/three.replay.out" || fail "three sorts: output differs"
[ "$(rc three replay)" = 1 ] || fail "three sorts: --strict passed: $(cat "$WORK/three.replay.err")"
grep -q "^memplan: [^ ]*three.plan: --strict: a process of the command could not read the plan; exit status 1$" \
  "$WORK/three.replay.err" || fail "three sorts: verdict: $(cat "$WORK/three.replay.err")"
grep -q "^memplan replay: .*; could not read the plan: sort$" "$WORK/three.replay.err" &&
  grep -q "^memplan: [^ ]*three.plan: the plan changed during the run$" "$WORK/three.replay.err" &&
  ! grep -q "another build" "$WORK/three.replay.err" ||
  fail "three sorts: summary: $(cat "$WORK/three.replay.err")"
python3 -S - "$WORK/three.stats" <<'PY' || fail "three sorts: statistics"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
sorts = [l for l in lines if l["exe"].endswith("/sort")]
assert len(sorts) == 3, lines
cut = [l for l in sorts if l.get("plan_unreadable")]
assert len(cut) == 1 and cut[0]["hits"] == 0 and cut[0]["allocs"] > 0, cut
assert cut[0]["misses"]["plan_unreadable"] > 0 and cut[0]["match"] == "none", cut
assert all(l["hits"] > 0 for l in sorts if l not in cut), sorts
PY
echo "three sorts, the plan cut before the third: ok"

# About 1 s of inserts into an in-memory database, millions of allocations.
cat >"$WORK/load.sql" <<'SQL'
CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c REAL);
CREATE INDEX tb ON t(b);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 600000)
INSERT INTO t SELECT i, printf('row-%d-%x', i * 7919 % 600000, i), i * 0.5 FROM n;
SELECT count(*), sum(length(b)), max(c) FROM t;
SELECT b FROM t ORDER BY b LIMIT 3;
SQL
run_plain load sqlite3 :memory: <"$WORK/load.sql"
[ "$(rc load plain)" -eq 0 ] || fail "sqlite3 failed on its own"
run "load" record "$MEMPLAN" record -o "$WORK/load.plan" -- sqlite3 :memory: <"$WORK/load.sql"
same_as_plain load record
valid_plan "$WORK/load.plan" || fail "no sound plan of the load"
"$MEMPLAN" record -o "$WORK/other.plan" -- sqlite3 :memory: <<<"SELECT 1;" >/dev/null ||
  fail "cannot record the other plan"

for how in truncate rewrite; do
  for delay in 0.05 0.2 0.5 1.0; do
    name=$how-$delay
    cp "$WORK/load.plan" "$WORK/$name.plan"
    cp "$WORK/load.plain.out" "$WORK/$name.plain.out"
    cp "$WORK/load.plain.rc" "$WORK/$name.plain.rc"
    (
      sleep "$delay"
      if [ $how = truncate ]; then
        : >"$WORK/$name.plan"
      else
        cat "$WORK/other.plan" >"$WORK/$name.plan"
      fi
    ) &
    changer=$!
    run "$name" replay bounded 120 "$MEMPLAN" replay -p "$WORK/$name.plan" -- sqlite3 :memory: <"$WORK/load.sql"
    wait "$changer" || true
    same_as_plain "$name" replay
    echo "$name: ok ($(grep -c 'memplan:' "$WORK/$name.replay.err" || true) memplan lines)"
  done
done
echo "plan changes during replay: ok"
