#!/usr/bin/env bash
# The whole malloc family keeps libc's promises under record and replay:
# alignment, zeroed calloc (also on reused arena bytes), realloc contents, usable
# sizes, overflow errors. An alignment beyond what a plan holds is never
# served from the arena, and uses up no entry of its call site.
. "$(dirname "$0")/lib.sh"

run_plain family "$PROGRAMS/family" 5
[ "$(cat "$WORK/family.plain.rc")" = 0 ] || fail "family fails even on plain libc"
run_record family "$PROGRAMS/family" 5
same_as_plain family record
run_replay family "$PROGRAMS/family" 5
same_as_plain family replay
# It makes calls no plan serves (over-aligned, zero-sized): all the others.
[ "$(stat_sum family hits)" = "$(stat_sum family planned)" ] ||
  fail "replay on the recorded input served $(stat_sum family hits) of $(stat_sum family planned) planned allocations"
[ "$(stat_sum family misses.alignment)" = 5 ] ||
  fail "the 5 over-aligned calls were counted as $(stat_sum family misses.alignment) alignment misses"
