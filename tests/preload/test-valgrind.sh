#!/usr/bin/env bash
# Under a valgrind tool that replaces the allocator (memcheck here), memplan
# stays off: the tool put memplan's malloc and free on its own allocator but
# not its memalign and the like, so blocks memplan served through those were
# freed to memcheck, which reported each free as invalid, and a program run
# with --error-exitcode failed. Under a tool that leaves the allocator alone
# (callgrind), memplan serves the program as usual.
. "$(dirname "$0")/lib.sh"
need valgrind

awk 'BEGIN { for (i = 0; i < 3000; i++) print (i * 7919) % 3001 }' >"$WORK/in.txt"

memcheck=(valgrind -q --error-exitcode=9 sort "$WORK/in.txt")
run_plain memcheck "${memcheck[@]}"
[ "$(cat "$WORK/memcheck.plain.rc")" = 0 ] ||
  fail "sort under memcheck failed on its own: $(head -5 "$WORK/memcheck.plain.err")"
run_record memcheck "${memcheck[@]}"
same_as_plain memcheck record
same_stderr_as_plain memcheck record
no_memplan_messages memcheck record
run_replay memcheck "${memcheck[@]}"
same_as_plain memcheck replay
same_stderr_as_plain memcheck replay

# A plan of sort itself, replayed on sort under memcheck: the summary says the
# tool kept the program, not that the plan was recorded from other programs.
"$MEMPLAN" record -o "$WORK/sort.plan" -- sort "$WORK/in.txt" >/dev/null
set +e
"$MEMPLAN" replay -p "$WORK/sort.plan" -- "${memcheck[@]}" >/dev/null 2>"$WORK/left.err"
set -e
grep -q "no process of the command was served: a program valgrind runs under a tool that keeps its own allocator (memcheck, massif...) is left to it$" \
  "$WORK/left.err" || fail "replay under memcheck: $(cat "$WORK/left.err")"

callgrind=(valgrind -q --tool=callgrind --callgrind-out-file=/dev/null sort "$WORK/in.txt")
run_plain callgrind "${callgrind[@]}"
run_record callgrind "${callgrind[@]}"
same_as_plain callgrind record
run_replay callgrind "${callgrind[@]}"
same_as_plain callgrind replay
same_stderr_as_plain callgrind replay
hit_ratio_at_least callgrind 90
echo "memplan off under memcheck, on under callgrind"
