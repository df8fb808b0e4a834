#!/usr/bin/env bash
# The test command: installs what is needed, builds, and runs every suite
# (unit, preload, tools, build). Then the unit suite again under
# AddressSanitizer and UndefinedBehaviorSanitizer, in build-asan/, and a short
# libFuzzer run on the plan reader (scripts/fuzz.sh; FUZZ_SECONDS, default 30).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
meson test -C build --print-errorlogs "$@"
if [ -z "${MEMPLAN_SKIP_SANITIZERS:-}" ]; then
  BUILD_DIR=build-asan scripts/build.sh -Db_sanitize=address,undefined -Db_lundef=false
  meson test -C build-asan --suite unit --print-errorlogs
  FUZZ_SECONDS=${FUZZ_SECONDS:-30} scripts/fuzz.sh
fi
