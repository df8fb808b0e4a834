#!/usr/bin/env bash
# Recording a realloc loop that stays in place, then moves the block, must not
# corrupt the program's heap: the output is the plain run's, memplan says
# nothing, and the plan is sound. (A site's log once had no room for in-place
# occurrences, and the next moved block was written past its end.) Perl's
# string building does the same kind of realloc run.
. "$(dirname "$0")/lib.sh"

for n in 100 1000 5000; do
  name=re$n
  run_plain $name "$PROGRAMS/realloc_in_place" $n
  [ "$(cat "$WORK/$name.plain.out")" = "ok $n" ] || fail "$name: unexpected plain run"
  run_record $name "$PROGRAMS/realloc_in_place" $n
  same_as_plain $name record
  no_memplan_messages $name record
  valid_plan "$WORK/$name.plan" || fail "$name: no sound plan after the recording"
  "$MEMPLAN" show "$WORK/$name.plan" >"$WORK/$name.show" 2>&1 ||
    fail "$name: memplan show refuses the plan: $(head -c 300 "$WORK/$name.show")"
  echo "$name: ok"
done

if command -v perl >/dev/null; then
  script='my @a = map { join(",", $_, $_ * 2) } 1..20000; my $j = join(";", @a); print length($j), "\n"'
  for i in 1 2 3; do
    run_plain perl$i perl -e "$script"
    run_record perl$i perl -e "$script"
    same_as_plain perl$i record
    no_memplan_messages perl$i record
    valid_plan "$WORK/perl$i.plan" || fail "perl$i: no sound plan after the recording"
  done
  echo "perl: ok"
else
  echo "perl not installed: its part skipped"
fi
echo "realloc in place: ok"
