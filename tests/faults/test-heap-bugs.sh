#!/usr/bin/env bash
# A heap bug of the program on a block that replay serves from its arena (a
# double free, a free of a pointer into a block, a realloc of a freed block;
# on an exact entry, and on a pool's slot, which its pool holds in the arena)
# aborts the program (status 134) with a memplan line naming the invalid
# pointer, as glibc aborts on them. (Replay once ignored them for arena blocks:
# the program went on, status 0, its bug hidden.)
. "$(dirname "$0")/lib.sh"

for bug in double-free interior realloc-freed pool-double-free pool-interior; do
  # Recorded with the same arguments, without the bug (HEAP_BUGS_CLEAN=1).
  HEAP_BUGS_CLEAN=1 run_record $bug "$PROGRAMS/heap_bugs" $bug
  [ "$(rc $bug record)" -eq 0 ] || fail "$bug: the clean recording failed: $(cat "$WORK/$bug.record.err")"
  grep -q "survived clean" "$WORK/$bug.record.out" || fail "$bug: the clean recording did not run clean"
  valid_plan "$WORK/$bug.plan" || fail "$bug: no sound plan"
  # The clean run replayed: every allocation of the program served from the
  # arena, the victim blocks among them.
  HEAP_BUGS_CLEAN=1 run_replay $bug "$PROGRAMS/heap_bugs" $bug
  [ "$(rc $bug replay)" -eq 0 ] || fail "$bug: the clean replay failed: $(cat "$WORK/$bug.replay.err")"
  allocs=$(stat_sum "$WORK/$bug.stats" allocs)
  hits=$(stat_sum "$WORK/$bug.stats" hits)
  [ "$hits" -ge 32 ] && [ "$hits" -eq "$allocs" ] ||
    fail "$bug: the clean replay served $hits of $allocs allocations from the arena"
  case $bug in pool-*)
    steady=$(stat_sum "$WORK/$bug.stats" steady_hits)
    [ "$steady" -gt 10000 ] || fail "$bug: only $steady allocations served by pools" ;;
  esac
  # Now with the bug.
  run $bug buggy "$MEMPLAN" replay -p "$WORK/$bug.plan" -- "$PROGRAMS/heap_bugs" $bug
  status=$(rc $bug buggy)
  [ "$status" -eq 134 ] ||
    fail "$bug: replay went on past the bug: status $status, output '$(cat "$WORK/$bug.buggy.out")', stderr '$(head -c 300 "$WORK/$bug.buggy.err")'"
  ! grep -q survived "$WORK/$bug.buggy.out" || fail "$bug: the program went on past the bug"
  grep -q "memplan: .*invalid pointer" "$WORK/$bug.buggy.err" ||
    fail "$bug: no memplan line about the invalid pointer: $(head -c 300 "$WORK/$bug.buggy.err")"
  echo "$bug: $(grep 'memplan:' "$WORK/$bug.buggy.err" | head -1)"
done
echo "heap bugs abort under replay: ok"

# Recorded with the bug, glibc aborts the program inside free, where memplan
# cannot write the plan without the risk of waiting forever on the lock glibc
# holds: the program ends as it would alone, and the process and memplan each
# say in one line why no plan was written. (Once: only "did the command
# allocate, or was it killed?")
run recorded-bug plain "$PROGRAMS/heap_bugs" double-free
run_record recorded-bug "$PROGRAMS/heap_bugs" double-free
same_as_plain recorded-bug record
grep -q "^memplan: the program ended on SIGABRT inside an allocation call .*double free.*plan is not written$" \
  "$WORK/recorded-bug.record.err" &&
  grep -q "^memplan: .*recorded-bug.plan: no process wrote a plan: the command ended on signal 6 " \
    "$WORK/recorded-bug.record.err" ||
  fail "recorded double free: expected the two lines, got: $(cat "$WORK/recorded-bug.record.err")"
echo "a double free recorded says why no plan was written: ok"
