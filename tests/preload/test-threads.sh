#!/usr/bin/env bash
# Threads: 4 and 8 threads allocate, fill every block with its own pattern and
# check it before freeing, under record and over many replays. Any overlap of live
# blocks would break a pattern (the program then exits 1).
. "$(dirname "$0")/lib.sh"

for threads in 4 8; do
  name=threads$threads
  run_plain "$name" "$PROGRAMS/pattern_threads" $threads 20000
  run_record "$name" "$PROGRAMS/pattern_threads" $threads 20000
  same_as_plain "$name" record
  for i in $(seq 1 10); do
    run_replay "$name" "$PROGRAMS/pattern_threads" $threads 20000
    same_as_plain "$name" replay
    no_memplan_messages "$name" replay
  done
  # Each thread keeps its own occurrences (thread lineage), so most allocations
  # match even though the threads interleave differently; the rest are refused
  # as busy when another thread's block is still live. Typically about 80%.
  hits=$(stat_sum "$name" hits)
  allocs=$(stat_sum "$name" allocs)
  [ $((hits * 4)) -ge "$allocs" ] || fail "$name: only $hits of $allocs served from the arena"
  echo "$name: last replay served $hits of $(stat_sum "$name" allocs) allocations from the arena"
  # Every stack names its site without the unwinder: walks cross memplan's
  # frame that starts each thread by its frame pointer, and what libc
  # allocates for a thread (its TLS; pthread_getattr_np's buffer, for memplan)
  # is not taken for the program's.
  [ "$(stat_sum "$name" misses.unknown_site)" -eq 0 ] && [ "$(stat_sum "$name" unwinds)" -eq 0 ] ||
    fail "$name: $(stat_sum "$name" misses.unknown_site) allocations of unknown site, $(stat_sum "$name" unwinds) unwinds"
done

# A thread whose start function allocates itself, with no frame pointer and
# a frame of a word or two: the walk goes through memplan's frame that starts
# the thread by the frame pointer that the allocation's shim saved. (The shim
# once went on to memplan by a tail call, whose frame took the shim's place:
# the walk read a stale word there, and every allocation of such a thread
# missed as unknown_site.)
name=direct
run_plain "$name" "$PROGRAMS/thread_direct" 200
run_record "$name" "$PROGRAMS/thread_direct" 200
same_as_plain "$name" record
run_replay "$name" "$PROGRAMS/thread_direct" 200
same_as_plain "$name" replay
[ "$(stat_sum "$name" hits)" -eq "$(stat_sum "$name" allocs)" ] &&
  [ "$(stat_sum "$name" misses.unknown_site)" -eq 0 ] ||
  fail "$name: $(stat_sum "$name" hits) of $(stat_sum "$name" allocs) allocations served, $(stat_sum "$name" misses.unknown_site) of unknown site"
echo "$name: every allocation of threads that allocate in their start function served"

# Threads whose blocks are alive side by side get regions of the arena of their
# own when recorded, so the replay serves every allocation whatever the
# interleaving; a re-plan by `memplan plan` must keep those regions (the plan
# marks them), or one thread's planned bytes would be another's live block.
name=rings4
run_plain "$name" "$PROGRAMS/thread_rings" 4 20000
run_record "$name" "$PROGRAMS/thread_rings" 4 20000
same_as_plain "$name" record
has_regions() {
  local regions
  regions=$("$MEMPLAN" show --json "$WORK/$1.plan" |
    python3 -S -c 'import json, sys; print(json.load(sys.stdin)["images"][0]["thread_regions"])')
  [ "$regions" = True ] || fail "$1: the recording gave its threads no regions of their own"
}
has_regions "$name"
# memplan starts every thread through a wrapper of its own; that frame is no part
# of a site (else each rebuild of memplan would change every thread's site keys).
"$MEMPLAN" show "$WORK/$name.plan" >"$WORK/$name.show" ||
  fail "$name: memplan show failed"
grep -q 'site_text\|site_node\|thread_rings' "$WORK/$name.show" ||
  fail "$name: the top sites do not show the program's frames"
! grep -q 'libmemplan' "$WORK/$name.show" ||
  fail "$name: a site holds a frame of memplan's own: $(grep -m1 libmemplan "$WORK/$name.show")"
"$MEMPLAN" plan "$WORK/$name.plan" -o "$WORK/$name.replanned" --time-limit 1 2>"$WORK/$name.plan.err" ||
  fail "$name: memplan plan failed: $(cat "$WORK/$name.plan.err")"
replay_all_served() {
  run_replay "$name" "$PROGRAMS/thread_rings" 4 20000
  same_as_plain "$name" replay
  no_memplan_messages "$name" replay
  hit_ratio_at_least "$name" 99
}
replay_all_served
mv "$WORK/$name.replanned" "$WORK/$name.plan"
replay_all_served

# The same threads recorded one after another, as a busy machine may run them:
# they are all alive at once, so the recording must still give each a region
# (what they need side by side is the sum of their peaks, not the most bytes
# live at once in this recording). A replay that runs them together then finds
# every planned block free.
name=rings4-turns
run_plain "$name" "$PROGRAMS/thread_rings" 4 20000
THREAD_RINGS_TURNS=1 run_record "$name" "$PROGRAMS/thread_rings" 4 20000
same_as_plain "$name" record
has_regions "$name"
replay_all_served
