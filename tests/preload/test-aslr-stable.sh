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

# A library loaded with dlopen, unloaded and loaded again elsewhere, twice: its
# call site is one site in every load (memplan's table of modules follows
# dlopen and dlclose), so replay serves every allocation made through it. Then
# another library is loaded where it was: its call site is its own, although
# its addresses were the first one's a moment before.
host=("$PROGRAMS/plugin_host" "$PROGRAMS/plugin.so" "$PROGRAMS/plugin_other.so" 3)
run_plain plugin "${host[@]}"
grep -q "^moved in 2 of 2 loads" "$WORK/plugin.plain.out" ||
  fail "plugin: the library did not move between loads: $(grep moved "$WORK/plugin.plain.out")"
grep -q "^other took the plugin's place: yes" "$WORK/plugin.plain.out" ||
  fail "plugin: the other library was not loaded where the first one was"
run_record plugin "${host[@]}"
same_as_plain plugin record
run_replay plugin "${host[@]}"
same_as_plain plugin replay
# The 10,000 calls made through plugin.so (at two call sites of the host) and
# the 2,000 through plugin_other.so have their first frames in their own
# libraries (by file and offset, not by an address that changed from load to
# load).
"$MEMPLAN" show --json --top 1000 "$WORK/plugin.plan" | python3 -S -c '
import json, sys
sites = json.load(sys.stdin)["images"][0]["top_sites"]
def calls_in(library):
    # Symbolised ("plugin_alloc+0x9 (...) in plugin.so") or not ("plugin.so+0x1129").
    return sum(s["allocations"] for s in sites
               if s["frames"][0].endswith(" in " + library) or s["frames"][0].startswith(library + "+0x"))
found = calls_in("plugin.so"), calls_in("plugin_other.so")
if found != (10000, 2000):
    sys.exit("plugin: %d calls in plugin.so, %d in plugin_other.so, not 10000 and 2000" % found)' ||
  fail "plugin: the libraries' call sites are not their own"
[ "$(stat_sum plugin hits)" = "$(stat_sum plugin allocs)" ] ||
  fail "plugin: $(stat_sum plugin hits) of $(stat_sum plugin allocs) allocations served ($(stat_sum plugin misses.unknown_site) of unknown site)"
echo "libraries loaded at moving and at reused addresses: one site each, all served"
