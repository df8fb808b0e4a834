#!/usr/bin/env bash
# A plan truncated (`: > plan`) or rewritten in place (`cat other > plan`) while
# a program replays it: the program runs on, with the plain run's output and
# status. (Replay once read the plan through a file mapping long after
# start-up: SIGBUS, status 135.)
. "$(dirname "$0")/lib.sh"
need sqlite3

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
