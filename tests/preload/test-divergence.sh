#!/usr/bin/env bash
# Replay on a run that differs from the recording (bigger, smaller or different
# input; different arguments) gives the plain run's output, never crashes, and
# counts the mismatches; another program's plan serves nothing.
. "$(dirname "$0")/lib.sh"
need sort sqlite3 python3

# image_pid PLAN CMD...: the pid `memplan show` gives the image of PLAN recorded
# with CMD (argv[0] by its file name).
image_pid() {
  local plan=$1; shift
  "$MEMPLAN" show --json "$plan" | python3 -S -c '
import json, os, sys
want = [os.path.basename(sys.argv[1])] + sys.argv[2:]
for im in json.load(sys.stdin)["images"]:
    args = im["args"]
    if args and [os.path.basename(args[0])] + args[1:] == want:
        print(im["pid"])
' "$@"
}

gen() { awk -v n="$1" -v s="$2" 'BEGIN { x = s; for (i = 0; i < n; i++) { x = (x * 1103515245 + 12345) % 2147483648; print x % 100003, "k" x % 331 } }'; }

# sort: same command line, different file contents. Ten times the input must run
# past the plan somewhere; every variant must still print what a plain run prints.
gen 20000 1 >"$WORK/in.txt"
run_record sort sort -k2 -n "$WORK/in.txt"
for variant in "200000 2" "500 3" "20000 4"; do
  gen $variant >"$WORK/in.txt"
  run_plain sort sort -k2 -n "$WORK/in.txt"
  run_replay sort sort -k2 -n "$WORK/in.txt"
  same_as_plain sort replay
  misses=$(python3 -S -c 'import json,sys; print(sum(sum(json.loads(l)["misses"].values()) for l in open(sys.argv[1])))' "$WORK/sort.stats")
  echo "sort on $variant: $(stat_sum sort hits) served, $misses missed of $(stat_sum sort allocs)"
  if [ "$variant" = "200000 2" ] && [ "$misses" -eq 0 ]; then
    fail "sort on ten times the input missed nothing: the mismatches were not counted"
  fi
done

# sqlite3: record one script, replay another at the same path.
printf 'CREATE TABLE t(a, b);\nINSERT INTO t VALUES (1, "x"), (2, "y");\nSELECT * FROM t;\n' >"$WORK/s.sql"
run_record sql sqlite3 :memory: ".read $WORK/s.sql"
awk 'BEGIN { print "CREATE TABLE t(a, b); BEGIN;"; for (i = 0; i < 30000; i++) printf "INSERT INTO t VALUES (%d, \"v%d\");\n", i % 97, i; print "COMMIT; SELECT a, count(*) FROM t GROUP BY a ORDER BY 2 DESC LIMIT 5;" }' >"$WORK/s.sql"
run_plain sql sqlite3 :memory: ".read $WORK/s.sql"
run_replay sql sqlite3 :memory: ".read $WORK/s.sql"
same_as_plain sql replay
beyond=$(stat_sum sql misses.occurrence_beyond)
[ "$beyond" -gt 0 ] || fail "sqlite3: a much bigger run used no more occurrences than planned"
echo "sqlite3 bigger script: $beyond allocations beyond the plan went to libc"

# Different arguments: a different image, which has no plan of its own; it takes
# the plan of the same program with the nearest arguments, and says so.
run_record threads "$PROGRAMS/pattern_threads" 2 5000
run_plain threads "$PROGRAMS/pattern_threads" 2 7000
run_replay threads "$PROGRAMS/pattern_threads" 2 7000
same_as_plain threads replay
[ "$(stat_sum threads misses.no_plan)" -eq 0 ] || fail "other arguments found no plan"
grep -q '"match":"same_exe"' "$WORK/threads.stats" ||
  fail "the plan of other arguments was not said to be used: $(cat "$WORK/threads.stats")"
[ "$(stat_sum threads hits)" -gt 0 ] || fail "the plan of other arguments served nothing"
[ "$(stat_sum threads image_pid)" = "$(image_pid "$WORK/threads.plan" "$PROGRAMS/pattern_threads" 2 5000)" ] ||
  fail "the statistics do not name the image used: $(cat "$WORK/threads.stats")"
# Of images apart by as many places, the one whose differing arguments are
# likest: a make build's cc1 of f257.c took the image of main.c, the first,
# over that of f1.c (74% served instead of 95%). Either order in the plan.
run_record near sh -c "'$PROGRAMS/pattern_threads' 2 100 && '$PROGRAMS/pattern_threads' 2 5000"
for n in 101 5001; do
  run_replay near "$PROGRAMS/pattern_threads" 2 $n
  [ "$(stat_sum near image_pid)" = "$(image_pid "$WORK/near.plan" "$PROGRAMS/pattern_threads" 2 $((n - 1)))" ] ||
    fail "pattern_threads 2 $n did not take the image of 2 $((n - 1)): $(cat "$WORK/near.stats")"
done
# Reordered arguments are the same arguments: `jq EXPR -r FILE` took the image
# of `jq -c OTHER FILE`, as far by position as that of `jq -r EXPR FILE`.
if command -v jq >/dev/null; then
  python3 -S -c 'import json, sys
json.dump([{"id": i, "name": "n%d" % i, "tags": ["Tag%d" % (i * 7 % 997 + j) for j in range(5)]}
           for i in range(int(sys.argv[1]))], sys.stdout)' 2000 >"$WORK/a.json"
  python3 -S -c 'import json, sys
json.dump([{"id": i, "name": "m%d" % i, "tags": ["Kind%d" % (i * 5 % 991 + j) for j in range(5)]}
           for i in range(int(sys.argv[1]))], sys.stdout)' 2100 >"$WORK/b.json"
  run_record jq sh -c "jq -c '.[]|{id,name}' '$WORK/a.json' >/dev/null && jq -r '.[]|.tags[]|ascii_downcase' '$WORK/a.json' >/dev/null"
  run_plain jq jq '.[]|.tags[]|ascii_downcase' -r "$WORK/b.json"
  run_replay jq jq '.[]|.tags[]|ascii_downcase' -r "$WORK/b.json"
  same_as_plain jq replay
  [ "$(stat_sum jq image_pid)" = "$(image_pid "$WORK/jq.plan" jq -r '.[]|.tags[]|ascii_downcase' "$WORK/a.json")" ] ||
    fail "jq with its options reordered did not take the image of the same options: $(cat "$WORK/jq.stats")"
  echo "jq reordered: $(stat_sum jq hits) of $(stat_sum jq allocs) served"
fi
# Another program has no plan at all.
run_plain other sort -n "$WORK/in.txt"
cp "$WORK/threads.plan" "$WORK/other.plan"
run_replay other sort -n "$WORK/in.txt"
same_as_plain other replay
[ "$(stat_sum other misses.no_plan)" -gt 0 ] || fail "no_plan was not counted"
grep -q '"match":"none"' "$WORK/other.stats" || fail "another program was matched to the plan"
grep -q '"image_pid"' "$WORK/other.stats" && fail "a process without an image names one"
# The same program by another path (relative, from its directory; a bare name
# found through PATH is the same case): the same image, since argv[0] counts by
# its file name only.
run_record bypath "$PROGRAMS/family" 5
run_plain bypath "$PROGRAMS/family" 5
(cd "$PROGRAMS" && run_replay bypath ./family 5)
same_as_plain bypath replay
[ "$(stat_sum bypath misses.no_plan)" -eq 0 ] || fail "the program run by another path found no plan"
grep -q '"match":"exact"' "$WORK/bypath.stats" || fail "the program run by another path is another image"
# A process without an image goes to libc at a counter's cost (route.h), and
# counts its calls as one with an image does: family makes every kind.
cp "$WORK/threads.plan" "$WORK/noimage.plan"
run_plain noimage "$PROGRAMS/family" 5
run_replay noimage "$PROGRAMS/family" 5
same_as_plain noimage replay
grep -q '"match":"none"' "$WORK/noimage.stats" || fail "noimage: family was matched to the plan"
[ "$(stat_sum noimage allocs)" = "$(stat_sum bypath allocs)" ] ||
  fail "without an image, $(stat_sum noimage allocs) allocation calls counted, with one $(stat_sum bypath allocs)"
[ "$(stat_sum noimage misses.no_plan)" = "$(stat_sum noimage allocs)" ] ||
  fail "noimage: not every call was a no_plan miss: $(cat "$WORK/noimage.stats")"
# family makes calls no plan serves (over-aligned, zero-sized): all the others.
[ "$(stat_sum bypath hits)" = "$(stat_sum bypath planned)" ] ||
  fail "bypath: $(stat_sum bypath hits) of $(stat_sum bypath planned) planned allocations served"
# perl with its per-run random hash seed: every run allocates differently.
for i in 1 2 3; do
  run_record perl perl -e 'my %h; $h{"k$_"} = "v" x ($_ % 50) for 1..50000; print scalar(keys %h), "\n"'
  run_plain perl perl -e 'my %h; $h{"k$_"} = "v" x ($_ % 50) for 1..50000; print scalar(keys %h), "\n"'
  run_replay perl perl -e 'my %h; $h{"k$_"} = "v" x ($_ % 50) for 1..50000; print scalar(keys %h), "\n"'
  same_as_plain perl replay
done
# Blocks held longer than recorded (a program whose order follows scheduling):
# each of late_free's second blocks finds its planned place still held by the
# first, and takes free room of the arena instead of libc (half its calls went
# to libc when a held place sent them there). Its pattern checks fail the run
# on any overlap.
run_record late "$PROGRAMS/late_free"
run_plain late "$PROGRAMS/late_free"
LATE_FREE=1 run_replay late "$PROGRAMS/late_free"
same_as_plain late replay
hit_ratio_at_least late 99
echo "divergence: ok"
