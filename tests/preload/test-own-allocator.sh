#!/usr/bin/env bash
# A program linked with an allocator of its own (bind9's tools and redis-cli
# link jemalloc) keeps it under memplan: every block memplan does not serve
# goes to that allocator, and its size is asked of it. memplan used to send
# them to glibc while malloc_usable_size went to the program's allocator:
# named-checkzone died at its first free under replay, and memplan with
# MEMPLAN_MODE=off was enough to crash a program that asked a block's size.
#
# strict_alloc_user is linked with strict_alloc.so, which ends the process
# (status 86) on any block it did not make: a miss sent anywhere else fails.
. "$(dirname "$0")/lib.sh"

user=$PROGRAMS/strict_alloc_user
LIB=$(dirname "$(dirname "$MEMPLAN")")/src/preload/libmemplan.so
[ -f "$LIB" ] || fail "libmemplan.so not found next to the CLI"
run_plain strict "$user" 300
[ "$(cat "$WORK/strict.plain.rc")" = 0 ] || fail "strict_alloc_user failed on its own"
for mode in off record; do
  set +e
  MEMPLAN_MODE=$mode MEMPLAN_PLAN=$WORK/raw.plan LD_PRELOAD=$LIB "$user" 300 >"$WORK/strict.$mode.out" 2>"$WORK/strict.$mode.err"
  echo $? >"$WORK/strict.$mode.rc"
  set -e
  same_as_plain strict "$mode"
  same_stderr_as_plain strict "$mode"
done
run_record strict "$user" 300
same_as_plain strict record
same_stderr_as_plain strict record
run_replay strict "$user" 300
same_as_plain strict replay
same_stderr_as_plain strict replay
hit_ratio_at_least strict 95
# Longer, with other arguments: the blocks past the plan are strict_alloc's.
run_plain longer "$user" 3000
cp "$WORK/strict.plan" "$WORK/longer.plan"
run_replay longer "$user" 3000
same_as_plain longer replay
same_stderr_as_plain longer replay
misses=$(( $(stat_sum longer allocs) - $(stat_sum longer hits) ))
[ "$misses" -gt 0 ] || fail "the longer run missed nothing: no block went to strict_alloc"
echo "longer: $misses allocations served by strict_alloc.so"

# A real one: named-checkzone, linked with jemalloc.
if command -v named-checkzone >/dev/null; then
  {
    echo '$TTL 3600'
    echo '@ IN SOA ns1.example.com. admin.example.com. ( 1 3600 600 86400 3600 )'
    echo '@ IN NS ns1.example.com.'
    echo 'ns1 IN A 192.0.2.1'
    awk 'BEGIN { for (i = 0; i < 2000; i++) {
      printf "host%d IN A 10.0.%d.%d\n", i, int(i / 256), i % 256
      if (i % 3 == 0) printf "host%d IN TXT \"record %d\"\n", i, i
      if (i % 5 == 0) printf "alias%d IN CNAME host%d\n", i, i } }'
  } >"$WORK/example.zone"
  zone=(named-checkzone -o - example.com "$WORK/example.zone")
  run_plain zone "${zone[@]}"
  [ "$(cat "$WORK/zone.plain.rc")" = 0 ] || fail "named-checkzone failed on its own"
  run_record zone "${zone[@]}"
  same_as_plain zone record
  run_replay zone "${zone[@]}"
  same_as_plain zone replay
  same_stderr_as_plain zone replay
  hit_ratio_at_least zone 90
else
  echo "named-checkzone not installed (bind9-utils): the real program's part skipped"
fi
# An allocator ahead of libmemplan.so in LD_PRELOAD (the raw form) takes every
# call itself: memplan says so in one line and stays off, rather than write an
# empty plan over the one there or replay nothing without a word. (jemalloc,
# which bind9-utils brings: an allocator that defines every call.)
jemalloc=$(ldconfig -p | awk '$1 == "libjemalloc.so.2" && !found { print $NF; found = 1 }')
if [ -n "$jemalloc" ]; then
  sort_in=$WORK/sort.in
  seq 1 2000 | awk '{ print ($1 * 37) % 2000 }' >"$sort_in"
  sort -n "$sort_in" >"$WORK/sort.expected"
  "$MEMPLAN" record -o "$WORK/sort.plan" -- sort -n "$sort_in" >/dev/null
  cp "$WORK/sort.plan" "$WORK/kept.plan"
  for mode in record replay; do
    MEMPLAN_MODE=$mode MEMPLAN_PLAN=$WORK/kept.plan LD_PRELOAD="$jemalloc:$LIB" \
      sort -n "$sort_in" >"$WORK/ahead.out" 2>"$WORK/ahead.err" || fail "sort failed behind jemalloc"
    cmp -s "$WORK/sort.expected" "$WORK/ahead.out" || fail "$mode behind jemalloc: output changed"
    [ "$(grep -c . "$WORK/ahead.err")" = 1 ] &&
      grep -q "^memplan: malloc is .*libjemalloc.so.2's, which comes before libmemplan.so in LD_PRELOAD, so memplan would see no allocation; not ${mode}ing (put libmemplan.so first)$" \
        "$WORK/ahead.err" || fail "$mode behind jemalloc: $(cat "$WORK/ahead.err")"
  done
  cmp -s "$WORK/sort.plan" "$WORK/kept.plan" || fail "a recording behind jemalloc changed the plan"
  echo "behind another allocator: said, and the plan kept"
else
  echo "libjemalloc.so.2 not installed: the allocator ahead of memplan's not tried"
fi
# memplan's library twice in LD_PRELOAD (an installed one and a build's, or a
# user's LD_PRELOAD that holds one when memplan's CLI adds its own): the first
# serves, the second says so once and stays off. (Each once took the other
# for the next allocator and handed every call back: the program spun
# forever, with any mode or none.)
mkdir -p "$WORK/twin"
cp "$LIB" "$WORK/twin/libmemplan-copy.so"
seq 1 2000 | sort -r >"$WORK/in.txt"
sort -n "$WORK/in.txt" >"$WORK/twin.expected"
for mode in off replay; do
  set +e
  timeout 30 env MEMPLAN_MODE=$mode MEMPLAN_PLAN="$WORK/raw.plan" \
    LD_PRELOAD="$WORK/twin/libmemplan-copy.so:$LIB" sh -c "sort -n '$WORK/in.txt' | cat" \
    >"$WORK/twin.$mode.out" 2>"$WORK/twin.$mode.err"
  rc=$?
  set -e
  [ "$rc" -eq 0 ] && cmp -s "$WORK/twin.expected" "$WORK/twin.$mode.out" ||
    fail "twin, mode $mode: status $rc, $(head -c 300 "$WORK/twin.$mode.err")"
done
[ ! -s "$WORK/twin.off.err" ] || fail "twin, mode off: $(cat "$WORK/twin.off.err")"
[ "$(grep -c . "$WORK/twin.replay.err")" -eq 1 ] &&
  grep -q "^memplan: LD_PRELOAD holds memplan's library twice, .*libmemplan-copy.so first; this copy stays off$" \
    "$WORK/twin.replay.err" || fail "twin, replay: $(cat "$WORK/twin.replay.err")"
echo "memplan's library twice: the first serves, the second stays off"
echo "programs keep their own allocator"
