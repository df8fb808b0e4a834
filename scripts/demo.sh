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
awk -v r="$replay_kib" -v p="$plain_kib" 'BEGIN {
  printf "peak RSS: replay %d KiB, plain glibc run %d KiB (%.2fx)\n", r, p, r / p }'
