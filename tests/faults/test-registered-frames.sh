#!/usr/bin/env bash
# A program that registers unwind tables (as a JIT does) and unwinds runs as it
# does plainly, recording and replaying. libgcc calls malloc while it holds the
# lock it takes to find a frame's unwind table; memplan unwinds with libgcc, and
# an unwind from inside such an allocation would wait on that lock for ever
# (without the check in stack_of, this test hangs).
. "$(dirname "$0")/lib.sh"

run_plain rf "$PROGRAMS/registered_frames"
[ "$(rc rf plain)" -eq 0 ] || fail "registered_frames failed on its own"
grep -q ', ok$' "$WORK/rf.plain.out" || fail "registered_frames did not unwind"
record_cleanly rf "$PROGRAMS/registered_frames"
run_replay rf "$PROGRAMS/registered_frames"
same_as_plain rf replay
no_memplan_messages rf replay
echo "registered unwind tables: ok"
