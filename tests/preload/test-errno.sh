#!/usr/bin/env bash
# memplan leaves errno as the program left it: a malloc or realloc that
# succeeds, and any free, under record and replay, and fork in the child.
# Replay opens the plan for entries past those read at start-up; in a program
# that had used up its descriptors that open failed, and 32,768 of a run's
# successful mallocs (and the forked children) returned with errno EMFILE: a
# program that reports its own failed call after allocating its message would
# have reported memplan's.
. "$(dirname "$0")/lib.sh"

prog=$PROGRAMS/errno_keep
run_plain short "$prog" 100000
grep -q 'malloc 0, free 0, realloc 0, fork 0$' "$WORK/short.plain.out" ||
  fail "errno_keep changes errno on its own: $(cat "$WORK/short.plain.out")"
run_record short "$prog" 100000
same_as_plain short record
run_replay short "$prog" 100000
same_as_plain short replay
hit_ratio_at_least short 95

# Requests no allocator can serve (over PTRDIFF_MAX) fail with ENOMEM as
# glibc's do, and count as no allocation: the same counts as without them,
# recorded and replayed. (Once: misses, which a --min-hit-rate held against
# the program.)
run_plain huge "$prog" 1000 huge
run_record huge "$prog" 1000 huge
same_as_plain huge record
run_replay huge "$prog" 1000 huge
same_as_plain huge replay
cp "$WORK/huge.plan" "$WORK/plain1000.plan"
run_replay plain1000 "$prog" 1000
[ "$(stat_sum huge allocs)" -eq "$(stat_sum plain1000 allocs)" ] &&
  [ "$(stat_sum huge hits)" -eq "$(stat_sum huge allocs)" ] ||
  fail "huge: $(stat_sum huge hits) of $(stat_sum huge allocs) served; $(stat_sum plain1000 allocs) allocations without the huge requests"
"$MEMPLAN" show "$WORK/huge.plan" >"$WORK/huge.show"
grep -Eq "^  allocations: +([0-9,]+) recorded of \1 calls" "$WORK/huge.show" ||
  fail "huge: the recording counted the failed requests: $(grep allocations "$WORK/huge.show")"

# Longer than the recording, with every descriptor in use: the plan cannot be
# opened for the entries past the windows read at start-up.
for name in longer full; do
  extra=()
  [ "$name" = full ] && extra=(full)
  run_plain "$name" "$prog" 1000000 "${extra[@]}"
  cp "$WORK/short.plan" "$WORK/$name.plan"
  run_replay "$name" "$prog" 1000000 "${extra[@]}"
  same_as_plain "$name" replay
done
# Allocations from hundreds of stacks grow memplan's per-thread caches of call
# sites, whose new pages it maps with madvise(MADV_POPULATE_WRITE). On a kernel
# without it (a seccomp filter, set by the system call, stands for one here)
# that call fails with EINVAL, and 3 successful mallocs of the replay returned
# with it in errno.
run_plain stacks "$prog" 100000 stacks
grep -q 'malloc 0, free 0, realloc 0, fork 0$' "$WORK/stacks.plain.out" ||
  fail "errno_keep stacks changes errno on its own: $(cat "$WORK/stacks.plain.out")"
run_record stacks "$prog" 100000 stacks
same_as_plain stacks record
run_replay stacks "$prog" 100000 stacks
same_as_plain stacks replay
echo "errno kept: $(cat "$WORK/full.replay.out")"
