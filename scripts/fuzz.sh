#!/usr/bin/env bash
# Fuzzes, with libFuzzer (clang) under ASan and UBSan, for FUZZ_SECONDS each
# (default 60): the plan file reader, seeded with plans recorded here from real
# programs; `memplan plan --csv` (the CSV reader, the planner and its
# checker), seeded with the packing instances of tests/tools/dsa; the
# statistics line parser, seeded with the lines of a replay here; and what
# `memplan diff` and `check` do with a plan (pairing images, naming sites),
# seeded with the plans.
# usage: scripts/fuzz.sh   (after scripts/build.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-60}
command -v clang >/dev/null || { echo "fuzz: clang is not installed (apt-get install clang)"; exit 1; }
out=build-fuzz
mkdir -p "$out/corpus" "$out/csv-corpus" "$out/stats-corpus"

# build TARGET SOURCE...: tests/fuzz/TARGET.c and the sources (and libraries) it tests.
build() {
  local target=$1; shift
  clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -Itools -Isrc/core -o "$out/$target" "tests/fuzz/$target.c" "$@"
}
# run TARGET MAX_LEN CORPUS: FUZZ_SECONDS of it, in the background, its output
# in $out/TARGET.log. finish waits for the runs started, shows the end of each
# log, and fails if any of them found something. Two at a time, one a core.
started=()
run() {
  "$out/$1" -max_total_time="$seconds" -max_len="$2" -artifact_prefix="$out/" "$3" \
    >"$out/$1.log" 2>&1 &
  started+=("$!:$1")
}
finish() {
  local job status=0
  for job in "${started[@]}"; do
    if ! wait "${job%%:*}"; then
      echo "fuzz: ${job#*:} failed:"
      status=1
    fi
    tail -3 "$out/${job#*:}.log"
  done
  started=()
  return "$status"
}
build fuzz-plan-file src/core/plan_file.c src/core/entry_codec.c src/core/plan_summary.c \
  src/core/atomic_file.c src/core/file_io.c src/core/hash64.c
build fuzz-csv-plan src/core/csv_instance.c src/core/checker.c src/core/planner.c \
  src/core/planner_greedy.c src/core/planner_lowest.c src/core/planner_search.c \
  src/core/planner_treap.c -lpthread -lm
build fuzz-stats-line tools/stats_line_parse.c
build fuzz-plan-compare tools/plan_compare.c tools/image_match.c tools/site_identity.c \
  tools/markdown_text.c tools/frame_symbols.c tools/symbolize.c tools/text_safe.c \
  src/core/plan_file.c src/core/entry_codec.c src/core/plan_summary.c src/core/atomic_file.c \
  src/core/file_io.c src/core/hash64.c src/core/temp_names.c src/core/utf8.c src/core/args_distance.c \
  -ldw -lelf -lstdc++

# The seeds.
for prog in "sort --version" "true"; do
  name=${prog%% *}
  build/tools/memplan record -o "$out/corpus/$name.plan" -- $prog >/dev/null
done
# A plan with pools and chunks (a loop's steady state), small enough to mutate.
HEAP_BUGS_CLEAN=1 build/tools/memplan record -o "$out/corpus/pools.plan" -- \
  build/tests/faults/heap_bugs clean >/dev/null
cp tests/tools/dsa/*.csv "$out/csv-corpus/"
# Sizes and alignments near the 2^63 bytes an instance may add up to.
printf 'id,lower,upper,size,alignment\na,0,5,4611686018427387904,1\nb,2,9,4611686018427387903,2\nc,4,6,16,1024\n' \
  >"$out/csv-corpus/near-limit.csv"
HEAP_BUGS_CLEAN=1 build/tools/memplan replay -p "$out/corpus/pools.plan" --quiet \
  --stats "$out/replay.stats" -- build/tests/faults/heap_bugs clean >/dev/null
split -l 1 "$out/replay.stats" "$out/stats-corpus/line-"
printf '{"exe":"/bin/a\\u00e9","pid":7,"allocs":3,"written":false,"error":"x","said":true}\n' \
  >"$out/stats-corpus/record-line"

run fuzz-plan-file 65536 "$out/corpus"
run fuzz-csv-plan 4096 "$out/csv-corpus"
finish
# The comparison mutates the plans' corpus too, once the reader is done with it.
run fuzz-stats-line 4096 "$out/stats-corpus"
run fuzz-plan-compare 65536 "$out/corpus"
finish
