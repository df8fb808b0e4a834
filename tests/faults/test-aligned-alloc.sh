#!/usr/bin/env bash
# aligned_alloc with an alignment that is no power of two, or 0, answers as the
# libc under memplan does (glibc 2.36 returns memory), recording and
# replaying. (memplan once returned NULL with EINVAL for them.)
. "$(dirname "$0")/lib.sh"

run_plain al "$PROGRAMS/aligned"
[ "$(rc al plain)" -eq 0 ] || fail "aligned failed on its own"
echo "plain run:"
sort -u "$WORK/al.plain.out"
record_cleanly al "$PROGRAMS/aligned"
run_replay al "$PROGRAMS/aligned"
same_as_plain al replay
no_memplan_messages al replay
[ "$(stat_sum "$WORK/al.stats" hits)" -gt 0 ] || fail "the replay served nothing from the arena"
run al raw env MEMPLAN_MODE=replay MEMPLAN_PLAN="$WORK/al.plan" LD_PRELOAD="$LIB" "$PROGRAMS/aligned"
same_as_plain al raw
echo "aligned_alloc as libc answers it: ok"
