#!/usr/bin/env bash
# memplan show of a plan of many process images: python3 running 60 children,
# each with arguments of its own, so each is an image of its own (and a pyenv
# shim, where there is one, adds its bash scripts). The summary before the
# first image's details fits one screen (24 lines of 80 columns) and names
# the image with the highest requested peak first, the real python; --all
# lists and details every image; --exe picks images; --bytes gives the exact
# figures of show --json; the line for the images left out of the table adds up.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "SKIP: python3 not installed"; exit 77; }
cd "$WORK"
cat >many.py <<'PY'
import subprocess, sys
keep = [bytes(4096) for _ in range(4000)]  # python holds about 16 MiB at its peak
for i in range(int(sys.argv[1])):
    cmd = [["sort", "-n", "-k", "1,%d" % (i + 1)], ["cat", "-"], ["sh", "-c", "cat", "job%d" % i]][i % 3]
    subprocess.run(cmd[:2] if i % 3 == 1 else cmd, input=b"%d\n" % i, stdout=subprocess.DEVNULL,
                   check=True)
print(len(keep))
PY
status 0 "$MEMPLAN" record -o many.plan -- python3 many.py 60
status 0 "$MEMPLAN" show --json many.plan
mv out many.json
python3 -S - many.json >expected <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
images = d["images"]
assert len(images) >= 41, len(images)  # 20 sorts, 20 shells, a cat, python
top = max(images, key=lambda i: (i["requested_peak_bytes"], i["arena_bytes"]))
assert top["exe"].rsplit("/", 1)[-1].startswith("python3"), top["exe"]
print(len(images), top["exe"].rsplit("/", 1)[-1], top["requested_peak_bytes"], top["arena_bytes"])
PY
read -r count top_name top_peak top_arena <expected

status 0 "$MEMPLAN" show many.plan
awk '/^image: /{ exit } { print }' out >summary
[ "$(wc -l <summary)" -le 24 ] || fail "the summary takes $(wc -l <summary) lines: $(cat summary)"
awk 'length($0) > 80 { bad = 1 } END { exit bad }' <(sed 1d summary) ||
  fail "a line of the table is wider than 80 columns: $(sed 1d summary | awk 'length($0) > 80')"
first=$(awk '$1 == "peak" { getline; print; exit }' summary)
# By the name it was run by, python3, and its executable's where that is
# another: "python3 (python3.11) many.py 60".
echo "$first" | awk -v n="$top_name" '$6 == n || ($6 == "python3" && $7 == "(" n ")") { ok = 1 } END { exit !ok }' ||
  fail "the first row is not $top_name: $first"
grep -q "^  \.\.\. [0-9]* more: " summary || fail "no line for the images left out: $(cat summary)"
[ "$(grep -c '^image: ' out)" = 3 ] || fail "not 3 images in detail: $(grep -c '^image: ' out)"
grep -q "^image: .*/$top_name " out || fail "the first image in detail is not $top_name"
echo "summary of $count images in $(wc -l <summary) lines; first: $first"

# --all: every image in the table and in detail.
status 0 "$MEMPLAN" show --all many.plan
[ "$(grep -c '^image: ' out)" = "$count" ] || fail "--all: $(grep -c '^image: ' out) images in detail, not $count"
rows=$(awk '$1 == "peak" { t = 1; next } /^$/ { t = 0 } t' out | wc -l)
[ "$rows" = "$count" ] || fail "--all: $rows rows in the table, not $count"
# --exe: only the shells (20 of them), by the name they were run by (sh, of
# an executable that may be dash).
status 0 "$MEMPLAN" show --all --exe sh many.plan
grep -q "^plan: many.plan (20 process images of $count;" out || fail "--exe: $(head -n 1 out)"
[ "$(grep -c '^image: ' out)" = 20 ] || fail "--exe: $(grep -c '^image: ' out) images in detail"
status 1 "$MEMPLAN" show --exe no-such-program many.plan
grep -q "no process image of an executable named no-such-program" err || fail "--exe none: $(cat err)"
# argv[0] matches as it was given (./sorter), as well as by its file name.
cp "$(command -v sort)" sorter
status 0 "$MEMPLAN" record -o dot.plan -- ./sorter many.py
for pattern in ./sorter './sort*' sorter; do
  status 0 "$MEMPLAN" show --exe "$pattern" dot.plan
  grep -q '^image: .*/sorter ' out || fail "--exe $pattern: $(cat out)"
done
# --bytes: the figures of show --json, to the byte.
status 0 "$MEMPLAN" show --bytes --exe "$top_name" many.plan
grep -q "^  arena:        $top_arena bytes$" out && grep -q "^  requested peak: $top_peak bytes " out ||
  fail "--bytes: not the figures of show --json ($top_arena, $top_peak): $(sed -n 1,20p out)"
# Counts read as in the heading, with thousands separators.
status 0 "$MEMPLAN" show --exe "$top_name" many.plan
total=$(sed -n '1s/.*totals: \([0-9,]*\) allocations.*/\1/p' out)
case $total in *,*) ;; *) fail "python's allocations have no separator: $(head -n 1 out)" ;; esac
grep -q "^  allocations:  $total recorded of [0-9,]* calls: [0-9,]* exact" out ||
  fail "the image's allocations are not the heading's $total: $(grep '^  allocations:' out)"
# --json with --exe: the chosen images only, their totals.
status 0 "$MEMPLAN" show --json --exe "$top_name" many.plan
python3 -S -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert len(d["images"]) == 1 and d["arena_bytes"] == int(sys.argv[2]), d["arena_bytes"]
' out "$top_arena" || fail "--json --exe"
# More programs past the table than the line names: the rest is counted, so
# that the counts add up to the images left out.
status 0 "$MEMPLAN" record -o distinct.plan -- sh -c \
  'for i in $(seq 20); do /bin/true $i; env X=$i >/dev/null; done; for c in id uname date whoami; do $c >/dev/null; done'
status 0 "$MEMPLAN" show distinct.plan
rest=$(grep '^  \.\.\. [0-9]* more: ' out) || fail "no line for the images left out: $(cat out)"
echo "$rest" | grep -Eq ' and [0-9]+ others? \(--all lists them\)$' || fail "the others are not counted: $rest"
echo "$rest" | awk '{ sum = 0; for (i = 4; i <= NF; i++) if ($i ~ /^[0-9]+$/) sum += $i; exit sum != $2 }' ||
  fail "the counts do not add up: $rest"
echo "show many: ok"
