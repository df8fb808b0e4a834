#!/usr/bin/env bash
# Fuzzes the plan file reader with libFuzzer (clang), under ASan and UBSan, for
# FUZZ_SECONDS (default 60). Seeds are plans recorded here from real programs.
# usage: scripts/fuzz.sh   (after scripts/build.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-60}
command -v clang >/dev/null || { echo "fuzz: clang is not installed (apt-get install clang)"; exit 1; }
out=build-fuzz
mkdir -p "$out/corpus"
clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -Isrc/core -o "$out/fuzz-plan-file" tests/fuzz/fuzz-plan-file.c \
  src/core/plan_file.c src/core/entry_codec.c src/core/plan_summary.c src/core/atomic_file.c \
  src/core/file_io.c src/core/hash64.c
for prog in "sort --version" "true"; do
  name=${prog%% *}
  build/tools/memplan record -o "$out/corpus/$name.plan" -- $prog >/dev/null
done
# A plan with pools and chunks (a loop's steady state), small enough to mutate.
HEAP_BUGS_CLEAN=1 build/tools/memplan record -o "$out/corpus/pools.plan" -- \
  build/tests/faults/heap_bugs clean >/dev/null
"$out/fuzz-plan-file" -max_total_time="$seconds" -max_len=65536 -artifact_prefix="$out/" \
  "$out/corpus" 2>&1 | tail -3
