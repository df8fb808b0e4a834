#!/usr/bin/env bash
# Replay names each call site from per-thread caches of the stacks it has seen,
# and walks a stack only when they do not know it (the replay statistics'
# `walks`). Hot stacks that evict each other walk at every call: sqlite3's
# wrapper of malloc reaches it by about a hundred stacks, and when two ways a
# set of the cache of those stacks held three hot ones, one of them walked at
# each of its calls (47,955 and 60,776 walks instead of about 750 in 2 of 60
# replays of a 20,000-row script). Which stacks share a set moves with ASLR, so
# each replay draws a layout: this replays sqlite3 five times and bounds the
# median of its walks at 1% of its allocations (about 0.13% when no set
# thrashes), which a cache that thrashes in most layouts fails.
. "$(dirname "$0")/lib.sh"
need sqlite3

awk 'BEGIN {
  print "CREATE TABLE t(id INTEGER PRIMARY KEY, k INTEGER, name TEXT, v REAL);"
  print "BEGIN;"
  for (i = 0; i < 20000; i++)
    printf "INSERT INTO t(k, name, v) VALUES (%d, \"name-%d-%s\", %d.5);\n", i % 211, i, substr("abcdefghijklmnopqrstuvwxyz", 1 + i % 26), i % 1000
  print "COMMIT;"
  print "CREATE INDEX t_k ON t(k);"
  print "SELECT k, count(*), sum(v) FROM t GROUP BY k ORDER BY k LIMIT 5;"
  print "SELECT substr(name, -1), count(*) FROM t GROUP BY 1 ORDER BY 2 DESC LIMIT 3;"
}' >"$WORK/rows.sql"

run_plain sqlite3 sqlite3 :memory: <"$WORK/rows.sql"
run_record sqlite3 sqlite3 :memory: <"$WORK/rows.sql"
same_as_plain sqlite3 record
walks=()
for i in 1 2 3 4 5; do
  run_replay sqlite3 sqlite3 :memory: <"$WORK/rows.sql"
  same_as_plain sqlite3 replay
  no_memplan_messages sqlite3 replay
  hit_ratio_at_least sqlite3 99 >/dev/null
  walks+=("$(stat_sum sqlite3 walks)")
done
allocs=$(stat_sum sqlite3 allocs)
median=$(printf '%s\n' "${walks[@]}" | sort -n | sed -n 3p)
echo "sqlite3: walks in 5 replays of $allocs allocations: ${walks[*]}"
[ "$median" -gt 0 ] || fail "sqlite3: no stack walked (are walks counted?)"
[ $((median * 100)) -le "$allocs" ] ||
  fail "sqlite3: a median of $median walks for $allocs allocations: the call-site caches thrash"
