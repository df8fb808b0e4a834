#!/usr/bin/env bash
# Files that memplan writes never spoil another, and what it says of a path
# stays on one line:
# - `replay --stats` (and the raw MEMPLAN_STATS) naming a plan: refused, the
#   plan kept whole (a line appended to it once made it unreadable for good);
# - `--stats` in a directory that does not exist: refused before the command
#   runs (it ran, and the summary was missing);
# - `plan --csv -o` over a plan or a binary file: refused, the file kept (it
#   was replaced by the CSV);
# - a plan replaced by a new recording keeps its mode and group (it became
#   0644, readable by all, whatever the old one's);
# - control characters in a plan's path are escaped in record's and replay's
#   messages, and in the library's (a newline split the line);
# - a statistics line no run writes (hits negative, or above allocs) is no
#   line to judge a run by (check passed a gate with "hits":-5).
. "$(dirname "$0")/lib.sh"
: "${PRELOAD_LIB:?}"
command -v sqlite3 >/dev/null || { echo "SKIP: sqlite3 not installed"; exit 77; }
cd "$WORK"
prog=(sqlite3 :memory: 'select 1')

status 0 "$MEMPLAN" record -o app.plan -- "${prog[@]}"
cp app.plan baseline.plan
sum=$(cksum <baseline.plan)

# --stats naming a plan: the replayed one, or another.
for target in baseline.plan app.plan; do
  status 1 "$MEMPLAN" replay -p app.plan --stats "$target" -- "${prog[@]}"
  grep -q "memplan: $target: is a plan; statistics appended to it would spoil it" err ||
    fail "--stats $target: $(cat err)"
  [ ! -s out ] || fail "--stats $target: the command ran"
done
[ "$(cksum <baseline.plan)" = "$sum" ] || fail "--stats changed the plan it named"
status 0 "$MEMPLAN" show app.plan
# The raw form: the program runs, its plan is kept, one line says why.
status 0 env MEMPLAN_MODE=replay MEMPLAN_PLAN=app.plan MEMPLAN_STATS=baseline.plan \
  LD_PRELOAD="$PRELOAD_LIB" "${prog[@]}"
[ "$(cat out)" = 1 ] || fail "raw replay with MEMPLAN_STATS on a plan: output $(cat out)"
grep -q "baseline.plan: is a plan, not a statistics file; no statistics are written to it" err ||
  fail "raw MEMPLAN_STATS on a plan: $(cat err)"
[ "$(cksum <baseline.plan)" = "$sum" ] || fail "MEMPLAN_STATS changed the plan it named"

# --stats where no directory is: said before the command runs.
status 1 "$MEMPLAN" replay -p app.plan --stats nodir/s.jsonl -- "${prog[@]}"
grep -q "memplan: nodir/s.jsonl: cannot write statistics: no such directory" err ||
  fail "--stats nodir/s.jsonl: $(cat err)"
[ ! -s out ] || fail "--stats nodir/s.jsonl: the command ran"

# plan --csv -o over a plan, or over a program: refused. Over an earlier CSV: written.
printf 'id,lower,upper,size\na,0,5,16\nb,2,9,32\n' >i.csv
cp "$(type -P true)" app
for target in baseline.plan app; do
  before=$(cksum <"$target")
  status 1 "$MEMPLAN" plan --csv i.csv -o "$target"
  grep -q "memplan: $target: exists and is no CSV file" err || fail "--csv -o $target: $(cat err)"
  [ "$(cksum <"$target")" = "$before" ] || fail "--csv -o $target changed it"
done
status 0 "$MEMPLAN" plan --csv i.csv -o planned.csv
status 0 "$MEMPLAN" plan --csv i.csv -o planned.csv
grep -q '^id,' planned.csv || fail "the planned CSV: $(head -2 planned.csv)"

# A replaced plan keeps its mode and group.
chmod 640 app.plan
group=$(getent group | awk -F: '$3 != 0 { print $1; exit }')
[ -z "$group" ] || chgrp "$group" app.plan
want=$(stat -c '%a %G' app.plan)
status 0 "$MEMPLAN" record -o app.plan -- "${prog[@]}"
[ "$(stat -c '%a %G' app.plan)" = "$want" ] ||
  fail "record over a plan of $want made it $(stat -c '%a %G' app.plan)"
status 0 "$MEMPLAN" plan app.plan -o app.plan
[ "$(stat -c '%a %G' app.plan)" = "$want" ] ||
  fail "plan -o over a plan of $want made it $(stat -c '%a %G' app.plan)"

# Control characters in paths: escaped, one line each.
status 1 "$MEMPLAN" record -o $'no\ndir/x.plan' -- true
[ "$(wc -l <err)" -eq 1 ] && grep -qF 'memplan: no\ndir/x.plan: ' err ||
  fail "record -o with a newline: $(cat err)"
status 0 "$MEMPLAN" replay -p $'no\x1b[31mfile.plan' -- true
grep -qF 'memplan: no\x1b[31mfile.plan: ' err && ! grep -q $'\x1b' err ||
  fail "replay -p with an escape: $(od -c err | head -3)"
status 0 env MEMPLAN_MODE=replay MEMPLAN_PLAN=app.plan MEMPLAN_STATS=$'no\ndir/s' \
  LD_PRELOAD="$PRELOAD_LIB" "${prog[@]}"
[ "$(wc -l <err)" -eq 1 ] && grep -qF 'no\ndir/s: cannot write statistics' err ||
  fail "raw MEMPLAN_STATS with a newline: $(cat err)"

# Statistics no run writes.
status 0 "$MEMPLAN" replay -p app.plan --stats good.jsonl -- "${prog[@]}"
status 0 "$MEMPLAN" check app.plan --min-hit-rate 90 --stats good.jsonl
for hits in -5 999999999 18446744073709551616; do
  sed "s/\"hits\":[0-9]*/\"hits\":$hits/" good.jsonl >bad.jsonl
  status 1 "$MEMPLAN" check app.plan --min-hit-rate 90 --stats bad.jsonl
done
echo "files memplan writes spoil no other: ok"
