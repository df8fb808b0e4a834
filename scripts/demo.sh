#!/usr/bin/env bash
# The demo: installs what it needs (the build's packages and time(1), nothing
# else), builds, records the bundled example program (a toy inference loop,
# tests/programs/demo_layers.c), shows its plan, replays it, and compares the
# replay's peak memory with a plain run's.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --demo
scripts/build.sh

memplan=build/tools/memplan
example=build/tests/programs/demo_layers
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "== memplan record -o demo.plan -- demo_layers 20"
$memplan record -o "$work/demo.plan" -- $example 20
echo
echo "== memplan show --top 5 demo.plan"
$memplan show --top 5 "$work/demo.plan"
echo
echo "== memplan replay -p demo.plan --strict -- demo_layers 20"
/usr/bin/time -f '%M' -o "$work/replay.rss" \
  $memplan replay -p "$work/demo.plan" --strict -- $example 20
/usr/bin/time -f '%M' -o "$work/plain.rss" $example 20 >/dev/null
echo
replay_kib=$(tail -n 1 "$work/replay.rss")
plain_kib=$(tail -n 1 "$work/plain.rss")
# The plan's own totals come first in its JSON, before its images'.
json=$($memplan show --json "$work/demo.plan")
arena=$(grep -o '"arena_bytes":[0-9]*' <<<"$json" | head -n 1 | cut -d: -f2)
lower=$(grep -o '"lower_bound_bytes":[0-9]*' <<<"$json" | head -n 1 | cut -d: -f2)
awk -v r="$replay_kib" -v p="$plain_kib" -v a="$arena" -v l="$lower" 'BEGIN {
  printf "arena: %d KiB, fixed before the run; the least any layout of these blocks could use: %d KiB\n", a / 1024, l / 1024
  printf "peak RSS: replay %d KiB, plain glibc run %d KiB (%.2fx): the same blocks, plus the\n", r, p, r / p
  printf "program itself and, under replay, memplan'"'"'s own code and tables (see docs/benchmarks.md)\n" }'
