#!/usr/bin/env bash
# Randomized differential stress (scripts/stress.sh) for about 40 seconds: the
# stress program (random mallocs, reallocs in place and moving, aligned
# allocations, frees across threads, every byte checked; in a third of the
# rounds, forked children, half of them ended by SIGTERM at once) plain, under
# record, and under replay of its own and of another seed's run, all with the
# same output. A failing round's files stay where the log says (under $TMPDIR).
# STRESS_SECONDS changes the duration, STRESS_TIMEOUT the limit of one command.
set -euo pipefail
: "${MEMPLAN:?MEMPLAN must name the memplan CLI}"
: "${PROGRAMS:?PROGRAMS must name the directory of the test programs}"
export MEMPLAN PROGRAMS
exec env STRESS_TIMEOUT="${STRESS_TIMEOUT:-60}" \
  "$(dirname "$0")/../../scripts/stress.sh" -v "${STRESS_SECONDS:-40}"
