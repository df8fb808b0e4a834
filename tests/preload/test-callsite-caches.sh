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

# replay_walks NAME RUNS [< INPUT] CMD...: records NAME once, replays it RUNS
# times (output as plain, no message, 99% served), and sets walks (each
# replay's), median and allocs.
replay_walks() {
  local name=$1 runs=$2 i input=/dev/null
  shift 2
  if [ "$1" = "<" ]; then input=$2; shift 2; fi
  run_plain "$name" "$@" <"$input"
  run_record "$name" "$@" <"$input"
  same_as_plain "$name" record
  walks=()
  for ((i = 0; i < runs; i++)); do
    run_replay "$name" "$@" <"$input"
    same_as_plain "$name" replay
    no_memplan_messages "$name" replay
    hit_ratio_at_least "$name" 99 >/dev/null
    walks+=("$(stat_sum "$name" walks)")
  done
  allocs=$(stat_sum "$name" allocs)
  median=$(printf '%s\n' "${walks[@]}" | sort -n | sed -n "$(((runs + 1) / 2))p")
  echo "$name: walks in $runs replays of $allocs allocations: ${walks[*]}"
}

replay_walks sqlite3 5 "<" "$WORK/rows.sql" sqlite3 :memory:
[ "$median" -gt 0 ] || fail "sqlite3: no stack walked (are walks counted?)"
[ $((median * 100)) -le "$allocs" ] ||
  fail "sqlite3: a median of $median walks for $allocs allocations: the call-site caches thrash"

# Call sites in functions laid out at a fixed stride (tests/programs/
# strided_sites.c: 64 of them, 16 bytes apart). With the origin's return
# address hashed, such a progression fell into few sets: 2,119 to 3,118 of
# 12,801 allocations walked in 6 replays (16-24%); with its 16-byte chunk
# hashed, 265 to 303. The median of three replays must stay under 12%.
replay_walks strided 3 "$PROGRAMS/strided_sites" 200
[ $((median * 100)) -le $((allocs * 12)) ] ||
  fail "strided: a median of $median walks for $allocs allocations: their origins crowd a few cache sets"

# Stacks the plan has no site for (tests/programs/other_paths.c): a replay
# with other options, or threads the recording did not run. Each is walked
# once and then known as none: every call walked once (7.6 times a plain
# run's time, a run of 30 million of them), twice through the express path.
# gf's stacks walk to their end through frames the plan knows; new's stop at
# one it does not.
run_record paths "$PROGRAMS/other_paths" fg 500
for mode in gf new; do
  run_plain "paths-$mode" "$PROGRAMS/other_paths" "$mode" 5000
  cp "$WORK/paths.plan" "$WORK/paths-$mode.plan"
  run_replay "paths-$mode" "$PROGRAMS/other_paths" "$mode" 5000
  same_as_plain "paths-$mode" replay
  unknown=$(stat_sum "paths-$mode" misses.unknown_site)
  walks=$(stat_sum "paths-$mode" walks)
  echo "other paths, $mode: $unknown calls from sites not in the plan, $walks walks"
  [ "$unknown" -ge 5000 ] || fail "paths-$mode: only $unknown calls from sites not in the plan"
  [ $((walks * 100)) -le "$unknown" ] ||
    fail "paths-$mode: $walks walks for $unknown calls from sites not in the plan"
done
