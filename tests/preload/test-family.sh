#!/usr/bin/env bash
# The whole malloc family keeps libc's promises under record and replay:
# alignment, zeroed calloc (also on reused arena bytes), realloc contents, usable
# sizes, overflow errors.
. "$(dirname "$0")/lib.sh"

run_plain family "$PROGRAMS/family" 5
[ "$(cat "$WORK/family.plain.rc")" = 0 ] || fail "family fails even on plain libc"
run_record family "$PROGRAMS/family" 5
same_as_plain family record
run_replay family "$PROGRAMS/family" 5
same_as_plain family replay
hit_ratio_at_least family 95
