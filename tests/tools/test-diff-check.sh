#!/usr/bin/env bash
# The memory gate (memplan diff, memplan check, scripts/ci-gate.sh) on a program
# of our own, gate_app.c, built here in versions: v2 allocates more in
# session_open, directly and through its inlined helper session_buffer; a
# rebuild with code moved, and one at -O1 without inlining, change nothing. Also:
# symbols stored in plans (show and diff after the binary is deleted, and the
# live fallback for a plan without them), the same figures in ten recordings,
# and bad input.
. "$(dirname "$0")/lib.sh"
: "${SOURCE_DIR:?}" "${CI_GATE:?}" "${PRELOAD_LIB:?}"
command -v cc >/dev/null || { echo "SKIP: no C compiler"; exit 77; }

# build NAME CFLAGS...: $WORK/NAME/gate_app. Every version has the same file
# name and is run the same way (./gate_app), as a rebuild in CI is.
build() {
  local name=$1; shift
  mkdir -p "$WORK/$name"
  cc -g "$@" "$SOURCE_DIR/gate_app.c" -o "$WORK/$name/gate_app"
}
# record NAME: $WORK/NAME.plan, from a run of NAME's build.
record() {
  (cd "$WORK/$1" && "$MEMPLAN" record -o "$WORK/$1.plan" -- ./gate_app >/dev/null) ||
    fail "recording $1 failed"
}
# json_get FILE EXPR: evaluates the Python expression EXPR on the JSON in FILE (d).
json_get() {
  python3 -S -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

build v1 -O2
build v2 -O2 -DVERSION=2
build moved -O2 -DMOVED
build o1 -O1 -fno-inline
build forked -O2 -DFORKED
nm "$WORK/o1/gate_app" >"$WORK/o1/symbols" # not piped to grep -q: see test-deepbind
grep -q ' session_buffer$' "$WORK/o1/symbols" || fail "-O1 -fno-inline inlined session_buffer"
for v in v1 v2 moved o1 forked; do record $v; done

# v2: 40 sessions live at the peak, each 16 bytes more in session_open's own
# allocation and 128 more in session_buffer's, inlined into it.
status 0 "$MEMPLAN" diff --json "$WORK/v1.plan" "$WORK/v2.plan"
cp "$WORK/out" "$WORK/v2.diff.json"
[ "$(json_get "$WORK/v2.diff.json" 'd["total"]["requested_peak_bytes"]["change"]')" = 5760 ] ||
  fail "diff: requested peak change is not 40 x 144 bytes: $(cat "$WORK/v2.diff.json")"
python3 -S - "$WORK/v2.diff.json" <<'PY' || fail "diff --json does not name the grown sites"
import json, sys
d = json.load(open(sys.argv[1]))
(image,) = d["images"]
assert image["status"] == "paired" and image["exe"] == "gate_app", image
def chain(site):
    return [(f["function"], f["inlined"]) for f in site["functions"]]
by_chain = {tuple(chain(s)): s for s in image["sites"]}
helper = by_chain[(("session_buffer", True), ("session_open", False), ("main", False))]
direct = by_chain[(("session_open", False), ("main", False))]
assert helper["peak_bytes"]["change"] == 40 * 128 and helper["allocations"]["change"] == 0, helper
assert direct["peak_bytes"]["change"] == 40 * 16, direct
assert helper["status"] == direct["status"] == "changed"
assert len(image["sites"]) == 2, image["sites"]  # nothing else changed
assert all(f["module"] == "gate_app" and f["line"] > 0 and f["file"].endswith("gate_app.c")
           for f in helper["functions"]), helper
PY
status 0 "$MEMPLAN" diff "$WORK/v1.plan" "$WORK/v2.plan"
grep -Eq '^ +15360 +\+5120 +40 +\+0  session_buffer <- session_open <- main \(gate_app\)$' \
  "$WORK/out" || fail "diff text: $(cat "$WORK/out")"
grep -Eq '^  requested peak +15808 +21568  \+5760 \(\+36\.44%\)$' "$WORK/out" ||
  fail "diff text figures: $(cat "$WORK/out")"
# --top 0: the counts of the sites that changed, and no table of none.
for format in "" --markdown; do
  status 0 "$MEMPLAN" diff $format --top 0 "$WORK/v1.plan" "$WORK/v2.plan"
  grep -Eqi '^ *call sites: 2 changed, 0 new, 0 gone\.?$' "$WORK/out" &&
    ! grep -Eq 'bytes@peak|bytes at the peak|session_open' "$WORK/out" ||
    fail "diff $format --top 0: $(cat "$WORK/out")"
done
status 0 "$MEMPLAN" diff --markdown "$WORK/v1.plan" "$WORK/v2.plan"
grep -Fq '| `session_buffer` ← `session_open` ← `main` (gate_app) | 15360 | +5120 | 40 | +0 |' \
  "$WORK/out" || fail "diff --markdown: $(cat "$WORK/out")"
grep -Fq '| requested peak | 15808 | 21568 | **+5760 (+36.44%)** |' "$WORK/out" ||
  fail "diff --markdown figures: $(cat "$WORK/out")"

# A child forked without exec runs its parent's command: diff and check mark
# it "(forked)", as show does, and diff --json gives its fork ordinal.
status 0 "$MEMPLAN" diff "$WORK/v1.plan" "$WORK/forked.plan"
grep -qx 'image \./gate_app (forked) (new)' "$WORK/out" || fail "diff of a forked child: $(cat "$WORK/out")"
grep -qx 'image \./gate_app (paired)' "$WORK/out" || fail "diff of a forked child's parent: $(cat "$WORK/out")"
status 0 "$MEMPLAN" diff --markdown "$WORK/v1.plan" "$WORK/forked.plan"
grep -qxF '#### `./gate_app` (forked) (new)' "$WORK/out" || fail "diff --markdown of a forked child: $(cat "$WORK/out")"
status 0 "$MEMPLAN" diff --json "$WORK/v1.plan" "$WORK/forked.plan"
[ "$(json_get "$WORK/out" 'sorted((i["status"], i.get("fork", 0)) for i in d["images"])')" = "[('new', 1), ('paired', 0)]" ] ||
  fail "diff --json of a forked child: $(cat "$WORK/out")"
status 1 "$MEMPLAN" check "$WORK/forked.plan" --max-allocs 100
grep -q '^FAIL --max-allocs 100: \./gate_app (forked) made 4[0-9][0-9] allocations' "$WORK/out" ||
  fail "check of a forked child: $(cat "$WORK/out")"

# check: v2 grew 36%, above 5%, at session_open; within 40%.
status 1 "$MEMPLAN" check "$WORK/v2.plan" --baseline "$WORK/v1.plan" --max-growth 5
[ "$(wc -l <"$WORK/out")" = 1 ] || fail "check: not one line per limit: $(cat "$WORK/out")"
grep -Eq '^FAIL --max-growth 5%: requested peak of \./gate_app grew by 5760 bytes, \+36\.44% .*grew most: session_buffer <- session_open <- main \(gate_app\) \+5120, session_open <- main \(gate_app\) \+640$' \
  "$WORK/out" || fail "check line: $(cat "$WORK/out")"
status 1 "$MEMPLAN" check "$WORK/v2.plan" --baseline "$WORK/v1.plan" --max-growth 5 --json
[ "$(json_get "$WORK/out" 'd["passed"], d["violations"][0]["sites"][0]["change"]')" = "(False, 5120)" ] ||
  fail "check --json: $(cat "$WORK/out")"
status 0 "$MEMPLAN" check "$WORK/v2.plan" --baseline "$WORK/v1.plan" --max-growth 40
grep -q '^OK ' "$WORK/out" || fail "check within limits: $(cat "$WORK/out")"
status 1 "$MEMPLAN" check "$WORK/v2.plan" --max-peak 20000 --max-allocs 481
[ "$(grep -c '^FAIL --max-' "$WORK/out")" = 2 ] || fail "check --max-peak --max-allocs: $(cat "$WORK/out")"
grep -q '^FAIL --max-peak 20000 bytes: requested peak of ./gate_app is 21568 bytes; hold the most: session_buffer <- session_open' \
  "$WORK/out" || fail "check --max-peak: $(cat "$WORK/out")"
status 0 "$MEMPLAN" check "$WORK/v2.plan" --max-peak 21568 --max-allocs 482
# Limits are written as given, in plain digits: %g wrote 1048577 as
# "1.04858e+06", which a script reads as 1048580, and kept six digits.
status 1 "$MEMPLAN" check "$WORK/v2.plan" --baseline "$WORK/v1.plan" --max-growth 2.123456789 --max-peak 12345
grep -q '^FAIL --max-growth 2.123456789%: ' "$WORK/out" || fail "check --max-growth: $(cat "$WORK/out")"
grep -q '^FAIL --max-peak 12345 bytes: ' "$WORK/out" || fail "check --max-peak: $(cat "$WORK/out")"
status 1 "$MEMPLAN" check "$WORK/v2.plan" --baseline "$WORK/v1.plan" --max-growth 2.123456789 --json
grep -q '"limit_value":2.123456789,' "$WORK/out" || fail "check --json: the limit is not as given: $(cat "$WORK/out")"
# Growth from a requested peak of 0 has no percentage: diff says "(new)", and
# check fails it whatever the limit, saying why, in text and JSON alike.
mkdir "$WORK/zero"
printf '#include <stdlib.h>\nint main(void) { return getenv("GROW") ? !malloc(1) : 0; }\n' >"$WORK/zero/one.c"
cc "$WORK/zero/one.c" -o "$WORK/zero/one"
(cd "$WORK/zero" && "$MEMPLAN" record -o "$WORK/zero0.plan" -- ./one &&
  GROW=1 "$MEMPLAN" record -o "$WORK/zero1.plan" -- ./one) || fail "recording ./one failed"
status 0 "$MEMPLAN" diff "$WORK/zero0.plan" "$WORK/zero1.plan"
grep -Eq '^  requested peak +0 +1  \+1 \(new\)$' "$WORK/out" || fail "diff from 0: $(cat "$WORK/out")"
why='requested peak of ./one grew by 1 bytes, new (0 -> 1 bytes): growth from 0 bytes is over any percentage'
status 1 "$MEMPLAN" check "$WORK/zero1.plan" --baseline "$WORK/zero0.plan" --max-growth 1000
grep -qF "FAIL --max-growth 1000%: $why; grew most: main (one) +1" "$WORK/out" ||
  fail "check of growth from 0: $(cat "$WORK/out")"
status 1 "$MEMPLAN" check "$WORK/zero1.plan" --baseline "$WORK/zero0.plan" --max-growth 1000 --json
[ "$(json_get "$WORK/out" 'd["violations"][0]["text"]')" = "$why" ] ||
  fail "check --json of growth from 0: $(cat "$WORK/out")"

# A figure 0 in both is no change, not a growth of unknown size (percent null);
# one a millionth bigger is "<0.01%", not "+0.00%".
status 0 "$MEMPLAN" diff --json "$WORK/zero0.plan" "$WORK/zero0.plan"
python3 -S - "$WORK/out" <<'PY' || fail "diff of 0 against 0: $(cat "$WORK/out")"
import json, sys
d = json.load(open(sys.argv[1]))
assert all(f["percent"] == 0 for f in d["total"].values()), d["total"]
PY
printf '#include <stdlib.h>\n#include <string.h>\nint main(void) { size_t n = 1000000 + !!getenv("GROW"); char *p = malloc(n); memset(p, 1, n); return p[n - 1] != 1; }\n' \
  >"$WORK/zero/mega.c"
cc "$WORK/zero/mega.c" -o "$WORK/zero/mega"
(cd "$WORK/zero" && "$MEMPLAN" record -o "$WORK/mega0.plan" -- ./mega &&
  GROW=1 "$MEMPLAN" record -o "$WORK/mega1.plan" -- ./mega) || fail "recording ./mega failed"
status 0 "$MEMPLAN" diff "$WORK/mega0.plan" "$WORK/mega1.plan"
grep -Eq '^  requested peak +1,?000,?000 +1,?000,?001  \+1 \(\+<0\.01%\)$' "$WORK/out" ||
  fail "diff of a millionth: $(cat "$WORK/out")"

# A rebuild that changes no behaviour changes nothing: code moved (every line),
# and -O1 without inlining against -O2 (session_buffer a frame of its own).
for v in moved o1; do
  status 0 "$MEMPLAN" diff --json "$WORK/v1.plan" "$WORK/$v.plan"
  python3 -S - "$WORK/out" <<'PY' || fail "$v: the diff is not empty: $(cat "$WORK/out")"
import json, sys
d = json.load(open(sys.argv[1]))
assert all(f["change"] == 0 for f in d["total"].values()), d["total"]
(image,) = d["images"]
assert image["status"] == "paired"
assert (image["changed_sites"], image["new_sites"], image["gone_sites"]) == (0, 0, 0), image
PY
  status 0 "$MEMPLAN" check "$WORK/$v.plan" --baseline "$WORK/v1.plan" --max-growth 0
done

# Ten recordings: the same requested peak and lower bound to the byte.
for i in 1 2 3 4 5 6 7 8 9 10; do
  (cd "$WORK/v1" && "$MEMPLAN" record -o "$WORK/run.plan" -- ./gate_app >/dev/null)
  "$MEMPLAN" show --json "$WORK/run.plan" >"$WORK/run.json"
  json_get "$WORK/run.json" 'd["requested_peak_bytes"], d["lower_bound_bytes"]' >>"$WORK/runs"
done
[ "$(sort -u "$WORK/runs")" = "(15808, 16128)" ] || fail "ten recordings differ: $(sort "$WORK/runs" | uniq -c)"

# Old plans stay readable: show and diff name functions after the binary is gone.
build gone -O2
record gone
rm "$WORK/gone/gate_app"
status 0 "$MEMPLAN" show --bytes "$WORK/gone.plan"
grep -q 'session_buffer (.*gate_app.c:[0-9]*) inlined in session_open (.*gate_app.c:[0-9]*) in gate_app$' \
  "$WORK/out" || fail "show of a plan whose binary is gone: $(cat "$WORK/out")"
grep -q '^  symbols:      stored in the plan when recorded$' "$WORK/out" || fail "show: symbols not stored"
grep -q '__libc_start' "$WORK/out" && fail "show lists libc's start-up frames"
grep -q '^  requested peak: 15808 bytes' "$WORK/out" || fail "show has no requested peak"
status 0 "$MEMPLAN" diff "$WORK/gone.plan" "$WORK/v2.plan"
grep -q '+5120 .* session_buffer <- session_open <- main (gate_app)$' "$WORK/out" ||
  fail "diff against a plan whose binary is gone: $(cat "$WORK/out")"
# A plan recorded without the CLI has no symbols: show looks them up now.
(cd "$WORK/v1" && MEMPLAN_MODE=record MEMPLAN_PLAN="$WORK/raw.plan" LD_PRELOAD="$PRELOAD_LIB" \
  ./gate_app >/dev/null)
status 0 "$MEMPLAN" show "$WORK/raw.plan"
grep -q '^  symbols:      none stored; looked up in the binaries now$' "$WORK/out" ||
  fail "show of a plan without symbols: $(cat "$WORK/out")"
grep -q 'session_buffer (.*) inlined in session_open (.*) in gate_app$' "$WORK/out" ||
  fail "show did not look the symbols up: $(cat "$WORK/out")"
status 0 "$MEMPLAN" diff --json "$WORK/raw.plan" "$WORK/v1.plan"
[ "$(json_get "$WORK/out" 'd["images"][0]["changed_sites"]')" = 0 ] ||
  fail "a plan without symbols does not pair with one with them: $(cat "$WORK/out")"
# A plan names its binaries' paths; one that now names a FIFO (or a device)
# is not read for symbols: show and diff end, with the frames unnamed.
mkdir "$WORK/fifo"
cp "$WORK/v1/gate_app" "$WORK/fifo/"
(cd "$WORK/fifo" && MEMPLAN_MODE=record MEMPLAN_PLAN="$WORK/fifo.plan" LD_PRELOAD="$PRELOAD_LIB" \
  ./gate_app >/dev/null)
rm "$WORK/fifo/gate_app"
mkfifo "$WORK/fifo/gate_app"
status 0 timeout 20 "$MEMPLAN" show "$WORK/fifo.plan"
grep -q "^image: $WORK/fifo/gate_app" "$WORK/out" || fail "show of a plan naming a FIFO: $(cat "$WORK/out")"
status 0 timeout 20 "$MEMPLAN" diff "$WORK/fifo.plan" "$WORK/fifo.plan"
status 0 "$MEMPLAN" show --json --top all "$WORK/v1.plan"
[ "$(json_get "$WORK/out" 'len(d["images"][0]["top_sites"]) == d["sites"] > 3')" = True ] ||
  fail "show --top all does not list every site"

# Replay statistics: v1 on its own plan is served from the arena; v2, another
# build, finds no plan for it (the plan is bound to the executable's build-id).
status 0 "$MEMPLAN" replay -p "$WORK/v1.plan" --stats "$WORK/v1.stats" -- "$WORK/v1/gate_app"
status 0 "$MEMPLAN" check "$WORK/v1.plan" --min-hit-rate 99 --stats "$WORK/v1.stats"
status 0 "$MEMPLAN" replay -p "$WORK/v1.plan" --stats "$WORK/v2.stats" -- "$WORK/v2/gate_app"
status 1 "$MEMPLAN" check "$WORK/v1.plan" --min-hit-rate 99 --stats "$WORK/v2.stats"
grep -q '^FAIL --min-hit-rate 99%: 0\.00% of 482 allocation calls .*no_plan 482' \
  "$WORK/out" || fail "check --min-hit-rate: $(cat "$WORK/out")"
# Only the lines of the plan checked count: by the path replay writes (made
# absolute, not resolved), or the same file by another path. v2 served on its
# own plan, its lines with v1's run on v1.plan, passes on v2.plan; a file of
# none of the plan's lines fails, and says whose they are.
status 0 "$MEMPLAN" replay -p "$WORK/v2.plan" --stats "$WORK/mixed.stats" -- "$WORK/v2/gate_app"
cat "$WORK/v2.stats" >>"$WORK/mixed.stats"
status 0 "$MEMPLAN" check "$WORK/v2.plan" --min-hit-rate 99 --stats "$WORK/mixed.stats"
ln -s v2.plan "$WORK/v2-link.plan"
status 0 "$MEMPLAN" check "$WORK/v2-link.plan" --min-hit-rate 99 --stats "$WORK/mixed.stats"
( cd "$WORK/v2" && status 0 "$MEMPLAN" check ../v2.plan --min-hit-rate 99 --stats ../mixed.stats )
status 1 "$MEMPLAN" check "$WORK/v2.plan" --min-hit-rate 99 --stats "$WORK/v1.stats"
grep -Eqx "memplan: $WORK/v1.stats: no statistics of $WORK/v2.plan in it; its [0-9]+ lines? (is|are) of $WORK/v1.plan" \
  "$WORK/err" || fail "check on statistics of another plan: $(cat "$WORK/err")"
# Statistics lines no memplan wrote (a file check takes from anywhere): nested
# 100,000 deep, a key that looks like a missed site's, a line cut after a
# backslash (the parser read past its end). None is read; the first crashed
# check (its stack), the second wrote far outside the line's record.
python3 -c 'print("{\"a\":" * 100000 + "1" + "}" * 100000)
print("{\"missed_sites/\":{\"allocs\":1}}")' >"$WORK/hostile.stats"
printf '{"exe":"a\\' >>"$WORK/hostile.stats" # the file's last line, no newline
status 1 "$MEMPLAN" check "$WORK/v1.plan" --min-hit-rate 99 --stats "$WORK/hostile.stats"
[ "$(cat "$WORK/err")" = "memplan: $WORK/hostile.stats: no replay statistics with allocations in it" ] ||
  fail "check of hostile statistics: $(cat "$WORK/err")"
# A statistics file that is not there is named with errno's reason.
status 1 "$MEMPLAN" check "$WORK/v1.plan" --min-hit-rate 99 --stats "$WORK/nonexist.stats"
[ "$(cat "$WORK/err")" = "memplan: $WORK/nonexist.stats: No such file or directory" ] ||
  fail "check of missing statistics: $(cat "$WORK/err")"
status 1 "$MEMPLAN" check "$WORK/v1.plan" --min-hit-rate 99 --stats "$WORK"
[ "$(cat "$WORK/err")" = "memplan: $WORK: not a regular file" ] ||
  fail "check of a directory as statistics: $(cat "$WORK/err")"

# The gate script of docs/ci.md: fails on v2, passes a rebuild, starts without
# a baseline.
mkdir "$WORK/gate"
(cd "$WORK/v2" && MEMPLAN=$MEMPLAN GATE_DIR=$WORK/gate "$CI_GATE" "$WORK/v1.plan" -- ./gate_app \
  >"$WORK/out" 2>&1) && fail "the gate passed v2: $(cat "$WORK/out")"
grep -q '^FAIL --max-growth 5%: .*session_open' "$WORK/out" || fail "gate: $(cat "$WORK/out")"
grep -q '+5120' "$WORK/gate/memplan-diff.md" || fail "gate: no Markdown report"
(cd "$WORK/moved" && MEMPLAN=$MEMPLAN GATE_DIR=$WORK/gate "$CI_GATE" "$WORK/v1.plan" -- ./gate_app \
  >"$WORK/out" 2>&1) || fail "the gate failed a rebuild: $(cat "$WORK/out")"
rm "$WORK/gate/memplan-head.plan"
(cd "$WORK/v1" && MEMPLAN=$MEMPLAN GATE_DIR=$WORK/gate "$CI_GATE" "$WORK/none.plan" -- ./gate_app \
  >"$WORK/out" 2>&1) || fail "the gate failed without a baseline: $(cat "$WORK/out")"
[ -s "$WORK/gate/memplan-head.plan" ] || fail "the gate recorded no plan"
# The report of the run before is gone, not published as this run's.
[ ! -e "$WORK/gate/memplan-diff.md" ] || fail "the gate left the earlier run's report"
# A run that writes no plan (a statically linked program) fails the gate, and
# does not pass it on the plan an earlier run left.
(MEMPLAN=$MEMPLAN GATE_DIR=$WORK/gate "$CI_GATE" "$WORK/v1.plan" -- /sbin/ldconfig -p \
  >"$WORK/out" 2>&1) && fail "the gate passed a run that wrote no plan: $(cat "$WORK/out")"
grep -q "^memplan gate: the run wrote no plan" "$WORK/out" || fail "gate without a plan: $(cat "$WORK/out")"
[ ! -e "$WORK/gate/memplan-head.plan" ] || fail "the gate left the earlier run's plan"

# docs/ci.md shows the gate as it is.
awk '/^<!-- scripts\/ci-gate.sh -->$/ { getline; on = 1; next } on && /^```$/ { exit } on' \
  "$SOURCE_DIR/../../docs/ci.md" | cmp -s - "$CI_GATE" || fail "docs/ci.md shows another gate script"

# Bad input: one line naming the file, exit 1, nothing on stdout (never "no
# change"). A plan of another program, a corrupt plan, a missing file, as BASE
# or as HEAD.
(cd "$WORK" && "$MEMPLAN" record -o "$WORK/other.plan" -- sort "$SOURCE_DIR/gate_app.c" >/dev/null)
head -c 3000 "$WORK/v1.plan" >"$WORK/cut.plan"
cp "$WORK/v1.plan" "$WORK/flipped.plan"
printf 'X' | dd of="$WORK/flipped.plan" bs=1 seek=2000 conv=notrunc 2>/dev/null
for bad in other cut flipped missing; do
  for order in "$bad v1" "v1 $bad"; do
    set -- $order
    status 1 "$MEMPLAN" diff "$WORK/$1.plan" "$WORK/$2.plan"
    [ ! -s "$WORK/out" ] || fail "diff $order printed a report: $(cat "$WORK/out")"
    # A plan of another program is sound: the line names both.
    named=$WORK/$bad.plan
    [ "$bad" != other ] || named="$WORK/$2.plan: .*$WORK/$1.plan"
    [ "$(wc -l <"$WORK/err")" = 1 ] && grep -q "^memplan: $named" "$WORK/err" ||
      fail "diff $order: $(cat "$WORK/err")"
  done
  status 1 "$MEMPLAN" check "$WORK/v1.plan" --baseline "$WORK/$bad.plan" --max-growth 5
  [ ! -s "$WORK/out" ] && grep -q "^memplan: .*$WORK/$bad.plan" "$WORK/err" ||
    fail "check with a $bad baseline: $(cat "$WORK/out" "$WORK/err")"
done
# A command with backticks and a '|' shows as it is in the Markdown heading:
# a code span between two backticks, which its own do not end.
for v in 1 2; do
  flag=; [ $v = 1 ] || flag=-r
  (cd "$WORK" && "$MEMPLAN" record -o "$WORK/tick$v.plan" -- sort $flag '`![x](y)`' 'a|b' \
    "$SOURCE_DIR/gate_app.c" >/dev/null 2>&1) || true
done
status 0 "$MEMPLAN" diff --markdown "$WORK/tick1.plan" "$WORK/tick2.plan"
grep -q '^#### `` sort -r `!\[x\](y)` a|b .*gate_app.c `` (paired by executable, arguments differ)$' "$WORK/out" ||
  fail "diff --markdown of a command with backticks: $(cat "$WORK/out")"
# A C++ operator| in a Markdown table: its '|' is the cell's "\|", not left out.
if command -v c++ >/dev/null; then
  mkdir "$WORK/op"
  cat >"$WORK/op/op.cc" <<'CC'
#include <cstdlib>
struct S { int n; };
__attribute__((noinline)) void *operator|(S s, int k) { return malloc((size_t)(s.n * k)); }
int main() { void *volatile p = S{getenv("GROW") ? 64 : 32} | 2; return !p; }
CC
  c++ -g -O1 "$WORK/op/op.cc" -o "$WORK/op/op"
  (cd "$WORK/op" && "$MEMPLAN" record -o "$WORK/op1.plan" -- ./op &&
    GROW=1 "$MEMPLAN" record -o "$WORK/op2.plan" -- ./op) || fail "recording ./op failed"
  status 0 "$MEMPLAN" diff --markdown "$WORK/op1.plan" "$WORK/op2.plan"
  grep -Fqx '| `operator\|(S, int)` ← `main` (op) | 128 | +64 | 1 | +0 |' "$WORK/out" ||
    fail "diff --markdown of operator|: $(cat "$WORK/out")"
fi
grep -q "shares no process image with" <("$MEMPLAN" diff "$WORK/v1.plan" "$WORK/other.plan" 2>&1) ||
  fail "diff of another program's plan does not say so"

# Images pair with the same run of the other plan whatever the order the
# command ran them in: two runs whose arguments differ only past the 32 KiB a
# recording keeps (a compiler's -I and -D before its source file), and two
# programs of one name in two directories (tests/a/test, tests/b/test). Once
# paired by what was kept alone, the first of equals: a false +4900%.
mkdir -p "$WORK/pair/a" "$WORK/pair/b"
cat >"$WORK/pair/blocks.c" <<'EOF_C'
#include <stdio.h>
#include <stdlib.h>
/* Holds N blocks of 1 KiB at once: N from -DN, else the last argument. */
int main(int argc, char **argv)
{
#ifdef N
	int n = N;
#else
	int n = atoi(argv[argc - 1]);
#endif
	char **v = malloc((size_t)n * sizeof(*v));
	for (int i = 0; i < n; i++)
		v[i] = calloc(1, 1024);
	for (int i = 0; i < n; i++)
		free(v[i]);
	free(v);
	printf("%d\n", n);
	return 0;
}
EOF_C
cc -o "$WORK/pair/blocks" "$WORK/pair/blocks.c"
cc -DN=5 -o "$WORK/pair/a/test" "$WORK/pair/blocks.c"
cc -DN=500 -o "$WORK/pair/b/test" "$WORK/pair/blocks.c"
flags=$(seq 1 9000 | tr '\n' ' ') # 38 KB of arguments
(cd "$WORK/pair" && "$MEMPLAN" record -o "$WORK/pair/base.plan" -- \
  sh -c "./blocks $flags 10; ./blocks $flags 500; a/test; b/test" >/dev/null) ||
  fail "pairing: recording the base failed"
(cd "$WORK/pair" && "$MEMPLAN" record -o "$WORK/pair/head.plan" -- \
  sh -c "b/test; a/test; ./blocks $flags 500; ./blocks $flags 10" >/dev/null) ||
  fail "pairing: recording the head failed"
status 0 "$MEMPLAN" check "$WORK/pair/head.plan" --baseline "$WORK/pair/base.plan" --max-growth 0
grep -q "^OK .*within every limit (5 process images checked)" "$WORK/out" ||
  fail "pairing: the same runs in another order do not pair: $(cat "$WORK/out")"
status 0 "$MEMPLAN" diff --json "$WORK/pair/base.plan" "$WORK/pair/head.plan"
# Each of the four programs with its own run; sh's arguments differ.
[ "$(json_get "$WORK/out" 'sorted((i["status"], i["args"][-1] == i["base_args"][-1]) for i in d["images"])')" = \
  "[('paired', True), ('paired', True), ('paired', True), ('paired', True), ('paired_by_executable', False)]" ] ||
  fail "pairing: diff --json: $(head -c 600 "$WORK/out")"
# A run of other arguments pairs with the nearest as replay finds it:
# reordered options are no difference (by position, `y -b 501` was as far
# from `-a x 10` as from `-b y 500`, and took the first).
(cd "$WORK/pair" && "$MEMPLAN" record -o "$WORK/pair/base2.plan" -- \
  sh -c "./blocks -a x 10; ./blocks -b y 500" >/dev/null) || fail "pairing: recording base2 failed"
(cd "$WORK/pair" && "$MEMPLAN" record -o "$WORK/pair/head2.plan" -- ./blocks y -b 501 >/dev/null) ||
  fail "pairing: recording head2 failed"
status 0 "$MEMPLAN" diff --json "$WORK/pair/base2.plan" "$WORK/pair/head2.plan"
[ "$(json_get "$WORK/out" '[i["base_args"][1:] for i in d["images"] if i["status"] == "paired_by_executable"]')" = \
  "[['-b', 'y', '500']]" ] || fail "pairing: reordered options: $(head -c 600 "$WORK/out")"

# Usage errors: exit 2.
status 2 "$MEMPLAN" diff "$WORK/v1.plan"
status 2 "$MEMPLAN" diff --json --markdown "$WORK/v1.plan" "$WORK/v2.plan"
status 2 "$MEMPLAN" diff --top some "$WORK/v1.plan" "$WORK/v2.plan"
status 2 "$MEMPLAN" check "$WORK/v1.plan"
status 2 "$MEMPLAN" check "$WORK/v1.plan" --max-growth 5
status 2 "$MEMPLAN" check "$WORK/v1.plan" --max-growth lots --baseline "$WORK/v1.plan"
for pct in 0x10 1e1 5e-1; do
  status 2 "$MEMPLAN" check "$WORK/v1.plan" --max-growth $pct --baseline "$WORK/v1.plan"
  status 2 "$MEMPLAN" check "$WORK/v1.plan" --min-hit-rate $pct --stats "$WORK/v1.stats"
done
status 0 "$MEMPLAN" check "$WORK/v2.plan" --max-growth 36.5 --baseline "$WORK/v1.plan"
status 2 "$MEMPLAN" check "$WORK/v1.plan" --min-hit-rate 90
status 2 "$MEMPLAN" check "$WORK/v1.plan" --max-peak 10 --stats "$WORK/v1.stats"
for cmd in diff check; do
  status 0 "$MEMPLAN" $cmd --help
  grep -Eq "^  memplan $cmd " "$WORK/out" || fail "$cmd --help has no example"
done
echo "diff and check: growth named and measured, rebuilds unchanged, bad input refused"
