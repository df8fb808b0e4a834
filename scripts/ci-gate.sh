#!/usr/bin/env bash
# A memory gate for a CI job (docs/ci.md explains it line by line):
#
#   scripts/ci-gate.sh BASELINE.plan -- CMD [ARG...]
#
# Records CMD (the job's test input) into memplan-head.plan, writes what changed
# against BASELINE.plan (the last release's plan, kept as a CI artifact) to
# memplan-diff.md, ready to paste into a pull-request comment, and fails if any
# process image's requested peak grew by more than MAX_GROWTH percent.
#
# Environment: MEMPLAN (the memplan command, default memplan), MAX_GROWTH
# (percent, default 5), GATE_DIR (where the files go, default .).
# Exit status: CMD's own if it failed; else 1 if a limit is exceeded or a plan
# cannot be written or read; else 0. Without a baseline (the first run) it records, says so
# and passes: keep memplan-head.plan as the baseline of the next runs.
set -euo pipefail

memplan=${MEMPLAN:-memplan}
max_growth=${MAX_GROWTH:-5}
dir=${GATE_DIR:-.}
if [ $# -lt 3 ] || [ "$2" != -- ]; then
  echo "usage: $0 BASELINE.plan -- CMD [ARG...]" >&2
  exit 2
fi
baseline=$1
shift 2
head="$dir/memplan-head.plan"
report="$dir/memplan-diff.md"

# 1. Record the test run. A failing test fails the job with its own status. A
#    plan or report left by an earlier run must not stand in for this one's.
rm -f "$head" "$report"
"$memplan" record -o "$head" -- "$@"
if [ ! -e "$head" ]; then
  echo "memplan gate: the run wrote no plan (memplan said why above)" >&2
  exit 1
fi

# 2. No baseline yet: nothing to compare with.
if [ ! -e "$baseline" ]; then
  echo "memplan gate: no baseline at $baseline; $head is the first one"
  exit 0
fi

# 3. The report, for people (a pull-request comment or the job's summary).
"$memplan" diff --markdown "$baseline" "$head" >"$report"

# 4. The verdict: exit 1, with one line per limit exceeded, if memory grew.
"$memplan" check "$head" --baseline "$baseline" --max-growth "$max_growth"
