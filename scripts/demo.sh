#!/usr/bin/env bash
# The demo: installs what is needed, builds, records the bundled example program
# (a toy inference loop, tests/programs/demo_layers.c), shows its plan, replays it,
# and compares the replay with a plain run.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh

memplan=build/tools/memplan
example=build/tests/programs/demo_layers
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "== memplan record -o demo.plan -- demo_layers 20"
$memplan record -o "$work/demo.plan" -- $example 20
echo
echo "== memplan show demo.plan"
$memplan show --top 5 "$work/demo.plan"
echo
echo "== memplan replay -p demo.plan --stats stats.jsonl -- demo_layers 20"
/usr/bin/time -f '%M' -o "$work/replay.rss" \
  $memplan replay -p "$work/demo.plan" --stats "$work/stats.jsonl" -- $example 20
/usr/bin/time -f '%M' -o "$work/plain.rss" $example 20 >/dev/null
echo
python3 -S - "$work/stats.jsonl" "$work/replay.rss" "$work/plain.rss" <<'PY'
import json, sys
s = json.loads(open(sys.argv[1]).readline())
replay_kib = int(open(sys.argv[2]).read().split()[-1])
plain_kib = int(open(sys.argv[3]).read().split()[-1])
misses = sum(s["misses"].values())
print(f"hit rate:     {s['hits']} of {s['allocs']} allocations served from the arena "
      f"({100.0 * s['hits'] / max(s['allocs'], 1):.1f}%), {misses} went to libc")
print(f"arena:        {s['arena_bytes']:,} bytes; lower bound {s['lower_bound_bytes']:,} bytes "
      f"({s['arena_bytes'] / max(s['lower_bound_bytes'], 1):.4f}x)")
print(f"peak RSS:     replay {replay_kib:,} KiB vs plain glibc run {plain_kib:,} KiB "
      f"({replay_kib / plain_kib:.2f}x)")
PY
