#!/usr/bin/env bash
# What memplan replay says when the command has ended, and --strict: gcc, whose
# cc1 and as are recorded on other arguments and temporary names, has them
# named in the one summary line, and its rerun, whose temporary names alone
# differ, none; --strict --min-hit-rate 90 fails a plan of
# other programs and passes an exact rerun; the verdict follows the share in
# the statistics; the command's output and own failure status are kept.
. "$(dirname "$0")/lib.sh"
for p in gcc sort ls perl python3; do
  command -v "$p" >/dev/null || { echo "SKIP: $p not installed"; exit 77; }
done
cd "$WORK"
printf '#include <stdio.h>\nint main(void) { puts("hello"); return 0; }\n' >hello.c
printf 'static int twice(int x) { return 2 * x; }\nint main(void) { return twice(0); }\n' >other.c
seq 1 3000 | awk '{ print ($1 * 31) % 3000 }' >in.txt
sort -n in.txt >sorted.txt

# gcc: a plan recorded on another source file. cc1 is named in the summary,
# with why its plan is not its own.
status 0 "$MEMPLAN" record -o gcc.plan -- gcc -O2 -c other.c
status 0 "$MEMPLAN" replay -p gcc.plan -- gcc -O2 -c hello.c
[ -s hello.o ] || fail "gcc under replay wrote no hello.o"
[ "$(grep -c . err)" = 1 ] || fail "gcc: expected one line, got: $(cat err)"
grep -Eq '^memplan replay: [0-9.]+% of [0-9,]+ allocations served from the arena by [0-9]+ process images .*; for other arguments: (.*, )?cc1 [0-9.]+%' err ||
  fail "gcc: the summary does not name cc1's plan for other arguments: $(cat err)"
echo "gcc: $(cat err)"
# The same gcc command again: cc1 and as get other temporary files
# (/tmp/ccXXXXXX.s), and every image is still its own, exactly.
rm -f hello.o
status 0 "$MEMPLAN" record -o gcc-same.plan -- gcc -O2 -c hello.c
rm -f hello.o
status 0 "$MEMPLAN" replay -p gcc-same.plan --stats gcc-same.jsonl -- gcc -O2 -c hello.c
[ -s hello.o ] || fail "gcc's rerun under replay wrote no hello.o"
grep -q "for other arguments" err && fail "gcc's rerun: served for other arguments: $(cat err)"
python3 -S - gcc-same.jsonl <<'PY' || fail "gcc's rerun: an image was not matched exactly"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
names = sorted(l["exe"].rsplit("/", 1)[-1] for l in lines)
assert any(n == "cc1" for n in names) and any(n.endswith("as") for n in names), names
wrong = [(l["exe"], l["match"]) for l in lines if l["match"] != "exact"]
assert not wrong, wrong
PY
echo "gcc's rerun: $(cat err)"

# Exact rerun: passes --strict --min-hit-rate 90.
status 0 "$MEMPLAN" record -o sort.plan -- sort -n in.txt
status 0 "$MEMPLAN" replay -p sort.plan --strict --min-hit-rate 90 -- sort -n in.txt
cmp -s out sorted.txt || fail "exact: output changed"
grep -q '^memplan replay: 100% of' err || fail "exact: $(cat err)"
# A plan of other programs: the command runs, then exit 1 with a reason.
status 0 "$MEMPLAN" record -o ls.plan -- ls /
status 1 "$MEMPLAN" replay -p ls.plan --strict --min-hit-rate 90 -- sort -n in.txt
cmp -s out sorted.txt || fail "other programs: output changed"
grep -q "^memplan: ls.plan: --strict: no process found its program in the plan; exit status 1$" err ||
  fail "other programs: $(cat err)"
# Without --strict the same run passes, and says why it served nothing.
status 0 "$MEMPLAN" replay -p ls.plan -- sort -n in.txt
grep -q "^memplan: ls.plan: no process of the command found its program in the plan (it was recorded from other programs); they ran on libc$" err ||
  fail "other programs, lenient: $(cat err)"
# A program rebuilt since its recording: the plan holds another build of it,
# which is said rather than "other programs".
printf '#include <stdio.h>\n#include <stdlib.h>\nint main(void) { char *p = malloc(99); puts(p ? "one" : "none"); free(p); return 0; }\n' >app.c
gcc -O2 -o app app.c
status 0 "$MEMPLAN" record -o app.plan -- ./app
sed -i 's/"one"/"two"/' app.c
gcc -O2 -o app app.c
status 0 "$MEMPLAN" replay -p app.plan -- ./app
[ "$(cat out)" = two ] || fail "rebuilt: output changed: $(cat out)"
grep -q "^memplan: app.plan: no process of the command found its program in the plan (it holds another build of app: record it again); they ran on libc$" err ||
  fail "rebuilt: $(cat err)"
# A program without a build-id is known by its path: a copy of it elsewhere
# finds no plan, which says where it was recorded, not that it was rebuilt.
mkdir p1 p2
gcc -O2 -Wl,--build-id=none -o p1/app app.c
cp p1/app p2/app
status 0 "$MEMPLAN" record -o nb.plan -- p1/app
status 0 "$MEMPLAN" replay -p nb.plan -- p2/app
grep -q "^memplan: nb.plan: no process of the command found its program in the plan (app was recorded at $WORK/p1/app without a build-id, so only a run from that path finds its plan: record it again); they ran on libc$" err ||
  fail "no build-id: $(cat err)"
status 0 "$MEMPLAN" replay -p nb.plan -- sh -c 'p1/app && p2/app'
grep -q "; recorded at another path, without a build-id: app; not in the plan: " err ||
  fail "no build-id, in the summary: $(cat err)"
# One allocation is one, not "1 allocations".
printf '#include <stdlib.h>\nint main(void) { void *volatile p = malloc(100); free(p); return 0; }\n' >one.c
gcc -O0 -o one one.c
status 0 "$MEMPLAN" record -o one.plan -- ./one
status 0 "$MEMPLAN" replay -p one.plan -- ./one
grep -q "^memplan replay: 100% of 1 allocation served from the arena (one, arena " err ||
  fail "one allocation: $(cat err)"
# Poorly served with too few calls to matter, under 100 and under a tenth of
# the command's, is not named, alone or with the others of its name (4
# processes of 20 calls each, by one of 2,000 served); it still counts in the
# share. 4 of 30 are named, and so is a command's only process however few its
# calls (nofile below). (Once: "poorly served: bash x4 0%" for 1 call each.)
# few makes N calls of a size the recording never made, with BIG in the
# environment: the same image, exactly.
printf '#include <stdlib.h>\nint main(void) { const char *n = getenv("N"); for (int i = 0; i < (n ? atoi(n) : 1); i++) { void *volatile p = malloc(getenv("BIG") ? 100000 : 100); free(p); } return 0; }\n' >few.c
printf '#include <stdlib.h>\nint main(void) { for (int i = 0; i < 2000; i++) { void *volatile p = malloc(64); free(p); } return 0; }\n' >many.c
gcc -O0 -o few few.c
gcc -O0 -o many many.c
four='./many; ./few; ./few; ./few; ./few; true'
status 0 "$MEMPLAN" record -o few.plan -- sh -c "$four"
BIG=1 N=20 status 0 "$MEMPLAN" replay -p few.plan --stats few.jsonl -- sh -c "$four"
[ "$(grep -c '"exe":"[^"]*/few",.*"hits":0,' few.jsonl)" = 4 ] || fail "few x4: not 4 lines of 0 hits: $(cat few.jsonl)"
grep -q "^memplan replay: 9[0-9.]*% of 2,[0-9,]* allocations served from the arena by [0-9]* process images (arenas [^)]*)$" err ||
  fail "few x4 of 20 calls named: $(cat err)"
BIG=1 N=30 status 0 "$MEMPLAN" replay -p few.plan -- sh -c "$four"
grep -q "; poorly served: few x4 0% (mostly size_unplanned" err || fail "few x4 of 30 calls not named: $(cat err)"

# A command killed by SIGKILL wrote no statistics: that is said, not that the
# plan is of other programs, directly or through a wrapper that says so in its
# status (timeout exits 137).
status 0 "$MEMPLAN" record -o perl.plan -- perl -e 'my @a = map { "x" x $_ } 1 .. 2000; print scalar(@a), "\n"'
status 137 "$MEMPLAN" replay -p perl.plan -- perl -e 'my @a = map { "x" x $_ } 1 .. 2000; kill KILL => $$'
grep -q "^memplan: perl.plan: the command was killed (signal 9) before any process of it in the plan wrote its statistics$" err ||
  fail "killed: $(cat err)"
status 137 "$MEMPLAN" replay -p perl.plan -- sh -c 'perl -e "kill KILL => \$\$"; exit 137'
grep -q "^memplan: perl.plan: the command was killed (signal 9) before" err ||
  fail "killed under a wrapper: $(cat err)"
# The command's own failure is its status, --strict or not, and the verdict
# says so rather than claim status 1.
status 3 "$MEMPLAN" replay -p ls.plan --strict -- sh -c 'sort -n in.txt; exit 3'
grep -q "^memplan: ls.plan: --strict: no process found its program in the plan; the command's own exit status, 3, stands$" err ||
  fail "strict verdict on a failed command: $(cat err)"
# An unusable plan, or statistics that cannot be read back, fail --strict.
head -c 64 sort.plan >cut.plan
status 1 "$MEMPLAN" replay -p cut.plan --strict -- sort -n in.txt
cmp -s out sorted.txt || fail "cut plan: output changed"
grep -q "^memplan: cut.plan: --strict: the plan could not be used; exit status 1$" err ||
  fail "cut plan: $(cat err)"
status 1 "$MEMPLAN" replay -p sort.plan --strict --stats /dev/null -- sort -n in.txt
grep -q "^memplan: sort.plan: --strict: the statistics file is not a regular file" err ||
  fail "stats on /dev/null: $(cat err)"
status 2 "$MEMPLAN" replay -p sort.plan --min-hit-rate lots -- sort -n in.txt
status 2 "$MEMPLAN" replay -p sort.plan --min-hit-rate 101 -- sort -n in.txt

# A plan of sort alone, for a shell script that runs more: the verdict is the
# share over all the command's processes against the threshold, as the
# statistics count it.
for pct in 5 50 95; do
  rm -f share.jsonl
  set +e
  "$MEMPLAN" replay -p sort.plan --min-hit-rate $pct --stats share.jsonl -- \
    sh -c 'sort -n in.txt | sort -rn | md5sum; python3 -S -c "print(1)"' >out 2>err
  got=$?
  set -e
  want=$(python3 -S - share.jsonl "$pct" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
hits, allocs = sum(l["hits"] for l in lines), sum(l["allocs"] for l in lines)
assert 0 < hits < allocs and len(lines) >= 4, (hits, allocs, len(lines))
print(1 if hits * 100 < float(sys.argv[2]) * allocs else 0)
PY
)
  [ "$got" = "$want" ] || fail "share $pct: exit $got, not $want: $(cat err)"
  grep -Eq '^memplan replay: .* by [0-9]+ process images .*; not in the plan: .*python3' err ||
    fail "share $pct: python3 is not named as not in the plan: $(cat err)"
  echo "share $pct: exit $got: $(head -n 1 err)"
done
# A shell loop forks more children than the plan keeps (64 an image): those
# past them replay the image of the sibling they repeat, and are served; their
# lines count in the share.
loop='i=0; while [ $i -lt 40 ]; do echo "$i" | cat | cat >/dev/null; i=$((i + 1)); done'
status 0 "$MEMPLAN" record -o loop.plan -- sh -c "$loop"
rm -f loop.jsonl
status 0 "$MEMPLAN" replay -p loop.plan --stats loop.jsonl -- sh -c "$loop"
grep -q 'forked children' err && fail "loop: forked children named as not in the plan: $(cat err)"
python3 -S - loop.jsonl "$(cat err)" <<'PY' || fail "loop: the summary does not add up the statistics: $(cat err)"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
allocs = sum(l["allocs"] for l in lines)
assert sum(1 for l in lines if l["match"] == "sibling") >= 50
assert "of {:,} allocations".format(allocs) in sys.argv[2], allocs
PY
echo "loop: $(cat err)"
# A program whose own plan was lost (it lowered its descriptor limit below
# what writing it takes) while its forked child's was written: the same build,
# no image of its own. Once named "another build of python3.11: record it
# again", which recording again could not change.
PY=$(python3 -c 'import sys; print(sys.executable)')
cat >nofile.py <<'PY'
import os, resource
pid = os.fork()
if pid == 0:
    kept = [str(i) * 20 for i in range(2000)]
    os._exit(0)
os.waitpid(pid, 0)
resource.setrlimit(resource.RLIMIT_NOFILE, (3, 3))
print("done")
PY
status 0 "$MEMPLAN" record -o nofile.plan -- "$PY" nofile.py
grep -q "nofile.plan: cannot write the plan: Too many open files" err || fail "nofile: record said: $(cat err)"
status 0 "$MEMPLAN" replay -p nofile.plan -- "$PY" nofile.py
grep -q "another build" err && fail "nofile: the same build called another: $(cat err)"
grep -Eq "poorly served: python3[.0-9]*( \(python3[.0-9]*\))? 0% \(mostly no_plan\)" err || fail "nofile: $(cat err)"
echo "replay summary: ok"
