#!/usr/bin/env bash
# A child signalled at once after fork, before it has run (a process pool
# ending a worker it has only just started), ends by that signal under record
# and replay, with the default action and with a handler of the program's.
# (The child took the signal for its parent's, deferred while the parent
# forked, and dropped it: it lived on. Python's multiprocessing.Pool then
# waited forever for a worker stuck on a lock its dead sibling held.)
. "$(dirname "$0")/lib.sh"

rounds=40
for how in default handler; do
  name=$how
  run_plain $name "$PROGRAMS/term_at_fork" $rounds $how
  [ "$(rc $name plain)" -eq 0 ] || fail "$how: the plain run failed: $(cat "$WORK/$name.plain.out" "$WORK/$name.plain.err")"
  run_record $name "$PROGRAMS/term_at_fork" $rounds $how
  [ "$(rc $name record)" -eq 0 ] ||
    fail "$how, record: $(cat "$WORK/$name.record.out") (status $(rc $name record); stderr: $(head -c 300 "$WORK/$name.record.err"))"
  valid_plan "$WORK/$name.plan" || fail "$how: no sound plan"
  run_replay $name "$PROGRAMS/term_at_fork" $rounds $how
  [ "$(rc $name replay)" -eq 0 ] ||
    fail "$how, replay: $(cat "$WORK/$name.replay.out") (status $(rc $name replay); stderr: $(head -c 300 "$WORK/$name.replay.err"))"
  echo "$how: record: $(cat "$WORK/$name.record.out"); replay: $(cat "$WORK/$name.replay.out")"
done
echo "SIGTERM at once after fork ends the child: ok"
