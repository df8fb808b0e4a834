#!/usr/bin/env bash
# Bad input gets one clear line on stderr and the program runs normally on libc:
# an unwritable plan path, a bad MEMPLAN_DEPTH, MEMPLAN_MAX_ALLOCS or
# MEMPLAN_PREFAULT, an unknown MEMPLAN_MODE, a recording that reaches
# MEMPLAN_MAX_ALLOCS, and
# truncated, corrupt, foreign, empty and future-version plans (raw LD_PRELOAD
# form and through the CLI), and plans of other programs (through the CLI).
. "$(dirname "$0")/lib.sh"
need sort

LIB=$(dirname "$(dirname "$MEMPLAN")")/src/preload/libmemplan.so
[ -f "$LIB" ] || fail "libmemplan.so not found next to the CLI"
seq 1 3000 | awk '{ print ($1 * 31) % 3000 }' >"$WORK/in.txt"
sort -n "$WORK/in.txt" >"$WORK/expected.out"

# raw NAME EXPECTED_PATTERN ENV...: one memplan line matching the pattern, normal output.
raw() {
  local name=$1 pattern=$2; shift 2
  env "$@" LD_PRELOAD="$LIB" sort -n "$WORK/in.txt" >"$WORK/$name.out" 2>"$WORK/$name.err" ||
    fail "$name: sort failed under memplan"
  cmp -s "$WORK/expected.out" "$WORK/$name.out" || fail "$name: output changed"
  [ "$(grep -c . "$WORK/$name.err")" -eq 1 ] ||
    fail "$name: expected one line on stderr, got: $(cat "$WORK/$name.err")"
  grep -Eq "^memplan: .*$pattern" "$WORK/$name.err" ||
    fail "$name: unexpected message: $(cat "$WORK/$name.err")"
  echo "$name: $(cat "$WORK/$name.err")"
}

raw missing-dir "missing-dir/x.plan: cannot write the plan here" \
  MEMPLAN_MODE=record MEMPLAN_PLAN="$WORK/missing-dir/x.plan"
[ ! -e "$WORK/missing-dir" ] || fail "memplan created a directory"
for depth in abc 0 65 -3 ""5x; do
  raw "depth-$depth" "MEMPLAN_DEPTH='$depth' is not a whole number from 1 to 64" \
    MEMPLAN_MODE=record MEMPLAN_PLAN="$WORK/d.plan" MEMPLAN_DEPTH="$depth"
done
[ ! -e "$WORK/d.plan" ] || fail "a plan was written despite a bad MEMPLAN_DEPTH"
raw bad-mode "MEMPLAN_MODE='bogus' is not record, replay or off" MEMPLAN_MODE=bogus MEMPLAN_PLAN="$WORK/x.plan"
raw bad-max "MEMPLAN_MAX_ALLOCS='lots' is not a whole number" \
  MEMPLAN_MODE=record MEMPLAN_PLAN="$WORK/m.plan" MEMPLAN_MAX_ALLOCS=lots
# A recording that reaches its limit says so once, and plans what came before.
raw max-allocs "m.plan: recording stopped after 20 allocations" \
  MEMPLAN_MODE=record MEMPLAN_PLAN="$WORK/m.plan" MEMPLAN_MAX_ALLOCS=20
"$PLAN_DIGEST" "$WORK/m.plan" >"$WORK/m.digest" || fail "max-allocs: bad plan"
entries=$(awk '$1 == "image" { print $NF }' "$WORK/m.digest")
[ "$entries" -eq 20 ] || fail "max-allocs: $entries entries instead of 20"
raw no-plan-var "needs MEMPLAN_PLAN" MEMPLAN_MODE=replay

# A good plan, then broken copies of it.
"$MEMPLAN" record -o "$WORK/good.plan" -- sort -n "$WORK/in.txt" >/dev/null
size=$(stat -c %s "$WORK/good.plan")
head -c $((size / 2)) "$WORK/good.plan" >"$WORK/truncated.plan"
cp "$WORK/good.plan" "$WORK/flipped.plan"
printf '\x55' | dd of="$WORK/flipped.plan" bs=1 seek=$((size - 20)) conv=notrunc status=none
head -c 4096 /dev/urandom >"$WORK/foreign.plan"
: >"$WORK/empty.plan"
cp "$WORK/good.plan" "$WORK/future.plan"
printf '\x07' | dd of="$WORK/future.plan" bs=1 seek=8 conv=notrunc status=none
# In the raw form, a plan that cannot be used, or a bad variable, is said once
# for a whole command, not once per process: a shell whose children find the
# same truncated plan gives one line. (pyenv's python3 once gave 35.)
for case in "truncated MEMPLAN_PLAN=$WORK/truncated.plan" \
  "depth MEMPLAN_PLAN=$WORK/good.plan MEMPLAN_DEPTH=lots"; do
  set -- $case
  env MEMPLAN_MODE=replay "$2" ${3:+"$3"} LD_PRELOAD="$LIB" \
    sh -c "sort -n '$WORK/in.txt'; sort -n '$WORK/in.txt' | sort -n | cat" \
    >"$WORK/once-$1.out" 2>"$WORK/once-$1.err" || fail "once-$1: the script failed"
  [ "$(grep -c . "$WORK/once-$1.err")" -eq 1 ] || fail "once-$1: not one line: $(cat "$WORK/once-$1.err")"
  echo "once-$1: $(cat "$WORK/once-$1.err")"
done
# MEMPLAN_PREFAULT takes 0 or 1, as MEMPLAN_STRICT: another value is said, and
# the replay goes on without prefaulting.
raw bad-prefault "MEMPLAN_PREFAULT='yes' is not 0 or 1; not prefaulting$" \
  MEMPLAN_MODE=replay MEMPLAN_PLAN="$WORK/good.plan" MEMPLAN_PREFAULT=yes

# Recording needs libmemplan-record.so beside libmemplan.so; replay loads it
# too, before the program's first dlopen (so that the loader's tables are the
# same in both), but runs none of its code, and can do without it. A
# libmemplan.so copied alone records nothing, says why in one line, and still
# replays.
mkdir "$WORK/lone"
cp "$LIB" "$WORK/lone/libmemplan.so"
LIB="$WORK/lone/libmemplan.so" raw lone-record "cannot start recording: .*libmemplan-record.so" \
  MEMPLAN_MODE=record MEMPLAN_PLAN="$WORK/lone.plan"
[ ! -e "$WORK/lone.plan" ] || fail "lone-record: a plan was written"
# memplan record looks before it runs the command: one line, status 1.
set +e
MEMPLAN_PRELOAD="$WORK/lone/libmemplan.so" "$MEMPLAN" record -o "$WORK/lone.plan" -- \
  sort -n "$WORK/in.txt" >"$WORK/lone-cli.out" 2>"$WORK/lone-cli.err"
rc=$?
set -e
[ "$rc" = 1 ] && [ ! -s "$WORK/lone-cli.out" ] && [ "$(grep -c . "$WORK/lone-cli.err")" = 1 ] &&
  grep -q "^memplan: $WORK/lone/libmemplan-record.so: No such file or directory (it holds the recording" \
    "$WORK/lone-cli.err" || fail "lone-record through the CLI: status $rc: $(cat "$WORK/lone-cli.err")"
MEMPLAN_MODE=replay MEMPLAN_PLAN="$WORK/good.plan" MEMPLAN_STATS="$WORK/lone.stats" \
  LD_PRELOAD="$WORK/lone/libmemplan.so" sort -n "$WORK/in.txt" >"$WORK/lone.out" ||
  fail "lone-replay: sort failed"
cmp -s "$WORK/expected.out" "$WORK/lone.out" || fail "lone-replay: output changed"
grep -Eq '"hits":[1-9]' "$WORK/lone.stats" || fail "lone-replay: nothing served: $(cat "$WORK/lone.stats")"
module_code_kib() { # MODE CMD...: KiB of the record module's code resident in CMD,
  # which prints its own smaps
  local mode=$1
  shift
  MEMPLAN_MODE=$mode MEMPLAN_PLAN="$WORK/$mode-maps.plan" LD_PRELOAD="$LIB" "$@" |
    awk '/^[0-9a-f]+-[0-9a-f]+ / { code = $2 ~ /x/ && $NF ~ /libmemplan-record\.so$/; seen += code }
         code && /^Rss:/ { kib += $2 } END { print seen ? kib : "unmapped" }'
}
cp "$WORK/good.plan" "$WORK/replay-maps.plan"
code=$(module_code_kib replay cat /proc/self/smaps)
[ "$code" = unmapped ] || fail "replay of cat, which calls no dlopen, mapped the record module"
# perl loads POSIX.so with dlopen.
code=$(module_code_kib replay perl -MPOSIX -e 'open my $f, "<", "/proc/self/smaps" or die; print <$f>')
[ "$code" = 0 ] || fail "replay of perl -MPOSIX: the record module $code (expected mapped, 0 KiB of code resident)"
code=$(module_code_kib record cat /proc/self/smaps)
[ "$code" != unmapped ] && [ "$code" -gt 0 ] || fail "record ran no code of the record module: $code"
echo "lone: replay served without the record module; with it, opened at the first dlopen, none of its code is resident"

raw truncated "truncated.plan: truncated" MEMPLAN_MODE=replay MEMPLAN_PLAN="$WORK/truncated.plan"
raw flipped "flipped.plan: checksum mismatch" MEMPLAN_MODE=replay MEMPLAN_PLAN="$WORK/flipped.plan"
raw foreign "foreign.plan: not a memplan plan" MEMPLAN_MODE=replay MEMPLAN_PLAN="$WORK/foreign.plan"
raw empty "empty.plan: empty file, not a plan" MEMPLAN_MODE=replay MEMPLAN_PLAN="$WORK/empty.plan"
raw future "future.plan: plan format version 7 is newer" MEMPLAN_MODE=replay MEMPLAN_PLAN="$WORK/future.plan"
raw missing "nowhere.plan: cannot open the plan" MEMPLAN_MODE=replay MEMPLAN_PLAN="$WORK/nowhere.plan"

# Through the CLI, with a shell and two children: still exactly one line.
for bad in truncated flipped foreign future; do
  "$MEMPLAN" replay -p "$WORK/$bad.plan" -- sh -c "sort -n '$WORK/in.txt' | cat" \
    >"$WORK/cli-$bad.out" 2>"$WORK/cli-$bad.err" || fail "cli-$bad: command failed"
  cmp -s "$WORK/expected.out" "$WORK/cli-$bad.out" || fail "cli-$bad: output changed"
  [ "$(grep -c . "$WORK/cli-$bad.err")" -eq 1 ] || fail "cli-$bad: $(cat "$WORK/cli-$bad.err")"
done

# A sound plan of other programs: memplan replay says so once, at the end,
# when no process of the command found its program in the plan (it reads the
# statistics, its own file if none was asked for). A process the recording
# never ran is no sign of that by itself: a wrapper (timeout) above the
# recorded program, or a child below it, is divergence, counted as no_plan,
# and named in the summary line.
"$MEMPLAN" record -o "$WORK/other.plan" -- ls / >/dev/null
# cli NAME PLAN [--stats FILE] -- CMD...: replays CMD; its output must be sort's;
# stderr in NAME.err.
cli() {
  local name=$1; shift
  "$MEMPLAN" replay -p "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" || fail "$name: command failed"
  cmp -s "$WORK/expected.out" "$WORK/$name.out" || fail "$name: output changed"
}
one_other_line() {
  [ "$(grep -c . "$WORK/$1.err")" -eq 1 ] &&
    grep -q "^memplan: $WORK/other.plan: no process of the command found its program in the plan" \
      "$WORK/$1.err" || fail "$1: expected one line, got: $(cat "$WORK/$1.err")"
}
cli other "$WORK/other.plan" -- sort -n "$WORK/in.txt"
one_other_line other
echo "other: $(cat "$WORK/other.err")"
echo '{"exe_in_plan":true}' >"$WORK/old.stats" # a line of an earlier run does not count
cli other-sh "$WORK/other.plan" --stats "$WORK/old.stats" -- sh -c "sort -n '$WORK/in.txt' | cat"
one_other_line other-sh
# One line each for the shell, sort and cat, and one for each child the shell
# forked that allocated before its exec.
for exe in sort cat; do
  [ "$(grep '"exe_in_plan":false' "$WORK/old.stats" | grep -c "\"exe\":\"[^\"]*/$exe\"")" -eq 1 ] ||
    fail "other-sh: $exe did not write its statistics once: $(cat "$WORK/old.stats")"
done
[ "$(grep '"exe_in_plan":false' "$WORK/old.stats" | grep -vc '"fork":')" -eq 3 ] ||
  fail "other-sh: the shell, sort and cat did not each write their statistics"
"$MEMPLAN" record -o "$WORK/sort.plan" -- sort -n "$WORK/in.txt" >/dev/null
cli wrapped "$WORK/sort.plan" --stats "$WORK/wrapped.stats" -- timeout 60 sort -n "$WORK/in.txt"
# summary NAME PATTERN: NAME's stderr is one summary line matching PATTERN.
summary() {
  [ "$(grep -c . "$WORK/$1.err")" -eq 1 ] && grep -Eq "^memplan replay: .*$2" "$WORK/$1.err" ||
    fail "$1: expected a summary line naming '$2', got: $(cat "$WORK/$1.err")"
}
summary wrapped "by 2 process images .*; not in the plan: timeout$"
grep -q '"exe":"/usr/bin/sort".*"no_plan":0' "$WORK/wrapped.stats" || fail "wrapped: sort found no plan"
"$MEMPLAN" record -o "$WORK/sh.plan" -- sh -c "sort -n '$WORK/in.txt'" >/dev/null
cli child "$WORK/sh.plan" --stats "$WORK/child.stats" -- sh -c "sort -n '$WORK/in.txt' | cat"
# The shell's children forked for the pipeline, which the recording never
# ran, go on with its image, and are named so.
summary child "; not in the plan: cat; forked children not in the plan: [a-z]+( \([a-z]+\))? x2 [0-9.]+%$"
grep -q '"exe":"/usr/bin/cat".*"no_plan":[1-9]' "$WORK/child.stats" ||
  fail "cat, which the recording never ran, counted no no_plan miss"
# A replay whose statistics go to a pipe finishes: the check at the end must not
# wait on it for input. (It reads back only a regular file, and seeking a pipe
# fails as well, so this guards against a hang, not that one rule.)
timeout 60 sh -c "'$MEMPLAN' replay -p '$WORK/other.plan' --stats /dev/stdout -- sort -n '$WORK/in.txt' | cat >/dev/null" ||
  fail "replay with its statistics on a pipe did not finish"
# No statistics line to go by (coreutils close stderr before memplan writes to
# /dev/stderr, here a pipe): nothing is said either.
{ "$MEMPLAN" replay -p "$WORK/other.plan" --stats /dev/stderr -- sort -n "$WORK/in.txt" \
  2>&1 >/dev/null || echo "command failed"; } | cat >"$WORK/closed.err"
[ ! -s "$WORK/closed.err" ] || fail "closed: printed: $(cat "$WORK/closed.err")"
# A regular file as stderr is kept open from the start (stats_file.h): the line
# is there, and the summary goes by it. (Opened for appending: memplan appends
# its line, which a write at stderr's own offset would overwrite.)
: >"$WORK/kept.err"
"$MEMPLAN" replay -p "$WORK/other.plan" --stats /dev/stderr -- sort -n "$WORK/in.txt" \
  >/dev/null 2>>"$WORK/kept.err" || fail "kept: command failed"
grep -q '^{"exe":"/usr/bin/sort",.*"exe_in_plan":false' "$WORK/kept.err" &&
  grep -q "^memplan: .*other.plan: no process of the command found its program" "$WORK/kept.err" ||
  fail "kept: expected sort's line and the summary, got: $(cat "$WORK/kept.err")"
# Truncated rather than appended to (2>): the summary goes after the line, not
# over its start, which it once overwrote.
"$MEMPLAN" replay -p "$WORK/other.plan" --stats /dev/stderr -- sort -n "$WORK/in.txt" \
  >/dev/null 2>"$WORK/kept2.err" || fail "kept2: command failed"
grep -q '^{"exe":"/usr/bin/sort",.*"exe_in_plan":false' "$WORK/kept2.err" &&
  grep -q "^memplan: .*other.plan: no process of the command found its program" "$WORK/kept2.err" ||
  fail "kept2: expected sort's line and the summary, got: $(cat "$WORK/kept2.err")"
# The recorded program with other arguments: divergence too, which the
# summary names.
"$MEMPLAN" replay -p "$WORK/sort.plan" -- sort -rn "$WORK/in.txt" >/dev/null 2>"$WORK/other-args.err" ||
  fail "other-args: command failed"
summary other-args "\(sort, arena .*\); for other arguments: sort [0-9.]+%$"
# Served under the share it must reach, the image for other arguments says
# why, as a poorly served one does. (sort --version allocates at call sites
# that sort -n never reached.)
"$MEMPLAN" replay -p "$WORK/sort.plan" --min-hit-rate 100 -- sort --version >/dev/null \
  2>"$WORK/other-args-poor.err" && fail "other-args-poor: under --min-hit-rate 100, exit status 0"
sed -i '/--strict/d' "$WORK/other-args-poor.err"
summary other-args-poor "; for other arguments: sort [0-9.]+% \(mostly [a-z_]+(; most missed at .*|: .*)?\)$"
# The good plan still works, and an unwritable statistics path is reported.
raw stats-unwritable "nodir/s.jsonl: cannot write statistics: No such file" \
  MEMPLAN_MODE=replay MEMPLAN_PLAN="$WORK/good.plan" MEMPLAN_STATS="$WORK/nodir/s.jsonl"
# A process reads and checks only its own image's tables: one image whose
# tables do not hold together (the checksum made valid again) leaves the other
# processes replaying theirs, and its own process says so in one line and runs
# on libc.
two="sort -n '$WORK/in.txt'; '$PROGRAMS/family' 2"
sh -c "$two" >"$WORK/two.expected.out"
"$MEMPLAN" record -o "$WORK/two.plan" -- sh -c "$two" >/dev/null
"$HOSTILE_PLAN" "$WORK/two.plan" "$WORK/two.bad.plan" badimage=family
env LD_PRELOAD="$LIB" MEMPLAN_MODE=replay MEMPLAN_PLAN="$WORK/two.bad.plan" \
  MEMPLAN_STATS="$WORK/two.stats" sh -c "$two" >"$WORK/two.out" 2>"$WORK/two.err" ||
  fail "two: the commands failed under a plan with one bad image"
cmp -s "$WORK/two.expected.out" "$WORK/two.out" || fail "two: output changed"
[ "$(grep -c . "$WORK/two.err")" -eq 1 ] &&
  grep -Eq "^memplan: .*two.bad.plan: image [0-9]+: site 0 frames out of bounds; running on libc$" "$WORK/two.err" ||
  fail "two: expected one line on the bad image, got: $(cat "$WORK/two.err")"
grep -Eq '"exe":"/usr/bin/sort".*"hits":[1-9]' "$WORK/two.stats" ||
  fail "two: sort, whose image is sound, was not replayed"
echo "two: $(cat "$WORK/two.err")"
# A process whose arguments no image has compares those of the images of its
# executable, each read where its record says: one that puts them past its
# strings makes it say so in one line and run on libc (as a process with that
# image's own arguments does, which reads the image's record in full).
"$HOSTILE_PLAN" "$WORK/sort.plan" "$WORK/args.bad.plan" badargs=sort
for args in -rn -n; do
  env LD_PRELOAD="$LIB" MEMPLAN_MODE=replay MEMPLAN_PLAN="$WORK/args.bad.plan" \
    sort $args "$WORK/in.txt" >"$WORK/args.out" 2>"$WORK/args.err" ||
    fail "args $args: sort failed under a plan with arguments out of bounds"
  sort $args "$WORK/in.txt" | cmp -s - "$WORK/args.out" || fail "args $args: output changed"
  [ "$(grep -c . "$WORK/args.err")" -eq 1 ] &&
    grep -Eq "^memplan: .*args.bad.plan: image [0-9]+: arguments out of bounds; running on libc$" "$WORK/args.err" ||
    fail "args $args: expected one line on the image's arguments, got: $(cat "$WORK/args.err")"
done
echo "args: $(cat "$WORK/args.err")"

# A process trusts the check its parent made of the plan (MEMPLAN_PLAN_CHECKED)
# only for the very same file: corrupted in place once the parent has read it,
# the plan is checked again by the child, and refused.
cp "$WORK/good.plan" "$WORK/inplace.plan"
mkfifo "$WORK/go"
env LD_PRELOAD="$LIB" MEMPLAN_MODE=replay MEMPLAN_PLAN="$WORK/inplace.plan" sh -c \
  "read go <'$WORK/go'; sort -n '$WORK/in.txt'" >"$WORK/inplace.out" 2>"$WORK/inplace.err" &
# The shell has read the plan before it opens the pipe, which this waits for.
exec 7>"$WORK/go"
printf '\x55' | dd of="$WORK/inplace.plan" bs=1 seek=$((size - 20)) conv=notrunc status=none
echo go >&7
exec 7>&-
wait $! || fail "inplace: sort failed under a plan corrupted while its parent ran"
cmp -s "$WORK/expected.out" "$WORK/inplace.out" || fail "inplace: output changed"
[ "$(grep -c . "$WORK/inplace.err")" -eq 1 ] &&
  grep -q "^memplan: .*inplace.plan: checksum mismatch (corrupt file); running on libc$" "$WORK/inplace.err" ||
  fail "inplace: expected the child to refuse the plan, got: $(cat "$WORK/inplace.err")"
echo "inplace: $(cat "$WORK/inplace.err")"

# A program whose stderr is a pipe that nobody reads any more (`2>&1 | head
# -1` once head is done): memplan's line about the corrupt plan must not kill
# it with SIGPIPE, as memplan's hook of fatal signals would pass on. The
# program runs and ends as it would alone.
python3 -S - "$LIB" "$WORK/flipped.plan" "$WORK/in.txt" "$WORK/pipe.out" <<'PY' ||
import os, subprocess, sys
lib, plan, data, out = sys.argv[1:]
r, w = os.pipe()
os.close(r)  # the reader is gone before the program writes
env = dict(os.environ, LD_PRELOAD=lib, MEMPLAN_MODE="replay", MEMPLAN_PLAN=plan)
with open(out, "wb") as f:
    code = subprocess.run(["sort", "-n", data], stdout=f, stderr=w, env=env).returncode
sys.exit(f"sort ended with {code} (negative: killed by that signal)" if code else 0)
PY
  fail "closed-stderr: the plan's error line harmed the program"
cmp -s "$WORK/expected.out" "$WORK/pipe.out" || fail "closed-stderr: output changed"
echo "closed-stderr: the program ran on"
echo "bad input: ok"
