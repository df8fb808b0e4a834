#!/usr/bin/env bash
# Recordings under address-space limits (ulimit -v), from one too small for
# the recording to one with room: the program's output and status are those
# of its plain run under the same limit, the plan is sound or absent, and
# when it is absent memplan says why in one line (memplan record adds no 'no
# process wrote a plan' to it). (The old build's processes already did this;
# its CLI added the wrong line.)
#
# The limits start well above the least the program needs with the library
# loaded: much nearer to it (6 to 10 MB here), the recording's own memory
# makes the program's malloc fail, on every build so far; this test does not
# cover that.
. "$(dirname "$0")/lib.sh"

prog=("$PROGRAMS/many_sites" 2000)
tested=0 too_small=0
for kb in 16000 24000 32000 48000 64000 128000 400000; do
  name=as$kb
  (ulimit -v $kb; run_plain $name "${prog[@]}")
  (ulimit -v $kb; MEMPLAN_MODE=off LD_PRELOAD="$LIB" run $name off "${prog[@]}")
  if [ "$(rc $name plain)" -ne 0 ] || [ "$(rc $name off)" -ne 0 ]; then
    echo "$name: the program does not run under this limit (plain $(rc $name plain), with the library loaded $(rc $name off)); limit skipped"
    continue
  fi
  tested=$((tested + 1))
  cp "$WORK/$name.plain.out" "$WORK/$name-raw.plain.out"
  cp "$WORK/$name.plain.rc" "$WORK/$name-raw.plain.rc"
  (ulimit -v $kb; run_record $name "${prog[@]}")
  (ulimit -v $kb; MEMPLAN_MODE=record MEMPLAN_PLAN="$WORK/$name-raw.plan" LD_PRELOAD="$LIB" \
    run $name-raw record "${prog[@]}")
  for n in $name $name-raw; do
    same_as_plain $n record
    lines=$(grep -c 'memplan:' "$WORK/$n.record.err" || true)
    if [ -e "$WORK/$n.plan" ]; then
      valid_plan "$WORK/$n.plan" || fail "$n: a torn plan under the limit"
      [ "$lines" -eq 0 ] || fail "$n: a plan, and yet: $(cat "$WORK/$n.record.err")"
      echo "$n: plan of $(stat -c %s "$WORK/$n.plan") bytes"
    else
      too_small=$((too_small + 1))
      [ "$lines" -eq 1 ] || fail "$n: no plan, and not one line about it: $(cat "$WORK/$n.record.err")"
      grep -q "memplan: $WORK/$n.plan: .*memory" "$WORK/$n.record.err" ||
        fail "$n: the line does not say memory ran out: $(cat "$WORK/$n.record.err")"
      echo "$n: $(cat "$WORK/$n.record.err")"
    fi
  done
  rm -f "$WORK/$name.plan" "$WORK/$name-raw.plan"
done
[ "$tested" -ge 3 ] || fail "only $tested limits could be tried"
# Something must have been too small, or the failure path went untested.
[ "$too_small" -ge 2 ] || fail "no limit was too small for the recording: lower the limits or raise the load"
echo "recording under RLIMIT_AS: ok ($tested limits, $too_small recordings out of memory)"

# A program that lowers its own limit to what it maps already, once started
# (own_limit.c): replay has reserved the arena before, and serves the planned
# blocks from it. It used to map its call-site caches and first windows only
# at the first allocation, found no room, and served none.
own=("$PROGRAMS/own_limit" 20 1048576)
run_plain own-free "${own[@]}" free
"$MEMPLAN" record -o "$WORK/own.plan" -- "${own[@]}" free >/dev/null ||
  fail "own_limit: recording failed"
rm -f "$WORK/own.stats"
run own replay "$MEMPLAN" replay -p "$WORK/own.plan" --stats "$WORK/own.stats" -- "${own[@]}"
[ "$(rc own replay)" = 0 ] && grep -q "^20 of 20 blocks$" "$WORK/own.replay.out" ||
  fail "own_limit under replay: $(cat "$WORK/own.replay.out" "$WORK/own.replay.err")"
[ "$(stat_sum "$WORK/own.stats" hits)" -ge 20 ] ||
  fail "own_limit: the blocks were not served from the arena: $(cat "$WORK/own.stats")"
run_plain own "${own[@]}"
echo "own limit: $(cat "$WORK/own.replay.out") under replay, $(cat "$WORK/own.plain.out") plain"
