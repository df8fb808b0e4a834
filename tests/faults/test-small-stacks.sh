#!/usr/bin/env bash
# Threads made with the smallest stacks a program may ask for (PTHREAD_STACK_MIN,
# 32 and 64 KiB) start, allocate and give the same results under record and
# replay, preloaded raw and with no mode at all. glibc puts every thread's
# static TLS on its stack: memplan's thread-local state once took 52 KiB of it,
# and pthread_create failed with EINVAL for these threads (node's of 64 KiB
# among them).
. "$(dirname "$0")/lib.sh"

run_plain ss "$PROGRAMS/small_stacks"
[ "$(rc ss plain)" -eq 0 ] || fail "small_stacks failed on its own"
cat "$WORK/ss.plain.out"
run ss preloaded env LD_PRELOAD="$LIB" "$PROGRAMS/small_stacks"
same_as_plain ss preloaded
record_cleanly ss "$PROGRAMS/small_stacks"
run_replay ss "$PROGRAMS/small_stacks"
same_as_plain ss replay
no_memplan_messages ss replay
[ "$(stat_sum "$WORK/ss.stats" hits)" -gt 0 ] || fail "the replay served nothing from the arena"

# What each thread pays: memplan's part of the static TLS stays small.
need readelf
tls=$(($(readelf -lW "$LIB" | awk '$1 == "TLS" { print $6 }' | grep . || echo 0)))
echo "libmemplan.so static TLS: $tls bytes"
[ "$tls" -le 1024 ] || fail "libmemplan.so takes $tls bytes of every thread's stack as TLS"
echo "threads on small stacks: ok"
