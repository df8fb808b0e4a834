#!/usr/bin/env bash
# The test command: installs what is needed, builds, and runs every suite
# (unit, preload, tools, build). Then the unit suite again under
# AddressSanitizer and UndefinedBehaviorSanitizer, in build-asan/, and a short
# libFuzzer run on the plan reader, the CSV planner, the statistics line parser
# and the comparison of plans (scripts/fuzz.sh; FUZZ_SECONDS each, default 30).
# Ends with one line counting every test run.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
logs=(build/meson-logs/testlog.json)
meson test -C build --print-errorlogs "$@"
if [ -z "${MEMPLAN_SKIP_SANITIZERS:-}" ]; then
  # Set up only: meson test builds what the unit suite needs, a third of the
  # whole build.
  [ -f build-asan/build.ninja ] ||
    meson setup build-asan -Db_sanitize=address,undefined -Db_lundef=false >/dev/null
  meson test -C build-asan --suite unit --print-errorlogs
  logs+=(build-asan/meson-logs/testlog.json)
  FUZZ_SECONDS=${FUZZ_SECONDS:-30} scripts/fuzz.sh
fi
python3 -S - "${logs[@]}" <<'PY'
import json, sys
counts = {"OK": 0, "FAIL": 0, "SKIP": 0}
for path in sys.argv[1:]:
    for line in open(path):
        result = json.loads(line)["result"]
        key = "OK" if result in ("OK", "EXPECTEDFAIL") else "SKIP" if result == "SKIP" else "FAIL"
        counts[key] += 1
print("tests: %d passed, %d failed, %d skipped" % (counts["OK"], counts["FAIL"], counts["SKIP"]))
PY
