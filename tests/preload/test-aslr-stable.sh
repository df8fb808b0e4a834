#!/usr/bin/env bash
# Two recordings of the same deterministic programs with ASLR on give identical
# site keys and entry sequences: call sites are module + offset, not addresses.
. "$(dirname "$0")/lib.sh"
need sort

[ "$(cat /proc/sys/kernel/randomize_va_space)" != 0 ] || fail "ASLR is off on this machine"
seq 1 5000 | awk '{ print ($1 * 7919) % 5000 }' >"$WORK/in.txt"
for run in 1 2; do
  "$MEMPLAN" record -o "$WORK/threads$run.plan" -- "$PROGRAMS/pattern_threads" 1 20000 >/dev/null
  "$MEMPLAN" record -o "$WORK/sort$run.plan" -- sort -n "$WORK/in.txt" >/dev/null
  # Files, not pipes: a pipe delivers data in chunks that vary from run to run.
  "$MEMPLAN" record -o "$WORK/sh$run.plan" -- sh -c "sort -n '$WORK/in.txt' >'$WORK/s1'; sort -r '$WORK/s1' >'$WORK/s2'; tail -3 '$WORK/s2'" >/dev/null
done
for p in threads sort sh; do
  "$PLAN_DIGEST" "$WORK/${p}1.plan" >"$WORK/${p}1.digest"
  "$PLAN_DIGEST" "$WORK/${p}2.plan" >"$WORK/${p}2.digest"
  [ "$(grep -c '^entry' "$WORK/${p}1.digest")" -gt 100 ] || fail "$p: too few entries to compare"
  cmp -s "$WORK/${p}1.digest" "$WORK/${p}2.digest" ||
    { diff "$WORK/${p}1.digest" "$WORK/${p}2.digest" | head -5; fail "$p: recordings differ"; }
done
# Addresses did move between the runs (otherwise this test proves nothing).
a=$(grep -m1 libc /proc/self/maps | cut -d- -f1)
b=$(grep -m1 libc /proc/self/maps | cut -d- -f1)
[ "$a" != "$b" ] || fail "libc was mapped at the same address twice: ASLR looks inactive"
echo "site keys and entries identical across recordings"
