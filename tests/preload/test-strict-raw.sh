#!/usr/bin/env bash
# Strict replay in the raw form (MEMPLAN_STRICT, MEMPLAN_MIN_HIT_RATE): the
# command ends with status 1 instead of 0 when its plan is unusable, of other
# programs, or serves less than the share asked for, judged over all its
# processes by the first one, with one line on stderr; its output, its own
# failure status and its children's statuses are left as they are.
. "$(dirname "$0")/lib.sh"
need sort grep python3

LIB=$(dirname "$(dirname "$MEMPLAN")")/src/preload/libmemplan.so
[ -f "$LIB" ] || fail "libmemplan.so not found next to the CLI"
seq 1 3000 | awk '{ print ($1 * 31) % 3000 }' >"$WORK/in.txt"
# A shell and its children; a child's status (grep's 1) is part of the output.
script="sort -n '$WORK/in.txt' | sort -n | md5sum; grep -q zzz '$WORK/in.txt'; echo grep=\$?; /bin/true; echo true=\$?"
sh -c "$script" >"$WORK/expected.out"

# strict NAME WANT_STATUS ENV...: runs the script under replay; output as plain.
strict() {
  local name=$1 want=$2 got; shift 2
  rm -f "$WORK/$name.stats"
  set +e
  env "$@" MEMPLAN_MODE=replay LD_PRELOAD="$LIB" sh -c "$script" >"$WORK/$name.out" 2>"$WORK/$name.err"
  got=$?
  set -e
  cmp -s "$WORK/expected.out" "$WORK/$name.out" || fail "$name: output changed: $(cat "$WORK/$name.out")"
  [ "$got" = "$want" ] || fail "$name: exit $got, not $want ($(cat "$WORK/$name.err"))"
}
one_line() { # NAME PATTERN
  [ "$(grep -c . "$WORK/$1.err")" = 1 ] && grep -Eq "^memplan: $2" "$WORK/$1.err" ||
    fail "$1: expected one line '$2', got: $(cat "$WORK/$1.err")"
  echo "$1: $(cat "$WORK/$1.err")"
}

MEMPLAN_MODE=record MEMPLAN_PLAN="$WORK/sh.plan" LD_PRELOAD="$LIB" sh -c "$script" >/dev/null
MEMPLAN_MODE=record MEMPLAN_PLAN="$WORK/ls.plan" LD_PRELOAD="$LIB" ls / >/dev/null
MEMPLAN_MODE=record MEMPLAN_PLAN="$WORK/sort.plan" LD_PRELOAD="$LIB" sort -n "$WORK/in.txt" >/dev/null

# An exact rerun passes, with or without a share asked for, and says nothing.
strict exact 0 MEMPLAN_PLAN="$WORK/sh.plan" MEMPLAN_STRICT=1 MEMPLAN_STATS="$WORK/exact.stats"
[ ! -s "$WORK/exact.err" ] || fail "exact: printed $(cat "$WORK/exact.err")"
strict exact90 0 MEMPLAN_PLAN="$WORK/sh.plan" MEMPLAN_MIN_HIT_RATE=90 MEMPLAN_STATS="$WORK/exact90.stats"
[ "$(grep -c . "$WORK/exact90.stats")" -ge 5 ] || fail "exact90: not every process wrote its statistics"

# A plan of other programs fails, as a whole, once; only the first process
# changed its status (grep's and true's are in the output).
strict other 1 MEMPLAN_PLAN="$WORK/ls.plan" MEMPLAN_STRICT=1 MEMPLAN_STATS="$WORK/other.stats"
one_line other "$WORK/ls.plan: no process of the command found its program in the plan; exit status 1"
strict other-alone 1 MEMPLAN_PLAN="$WORK/ls.plan" MEMPLAN_STRICT=1
one_line other-alone "$WORK/ls.plan: the plan has no image of this program; exit status 1"
# Without strict, the same run passes.
strict lenient 0 MEMPLAN_PLAN="$WORK/ls.plan"
# The command's own failure is its status, strict or not.
script_ok=$script
script="$script_ok; exit 3"
sh -c "$script" >"$WORK/expected.out" || true
strict own-failure 3 MEMPLAN_PLAN="$WORK/ls.plan" MEMPLAN_STRICT=1
script=$script_ok
sh -c "$script" >"$WORK/expected.out"

# A plan of sort alone serves part of the command: the verdict follows the
# share of all its processes' allocations, against the threshold.
for pct in 1 90 100; do
  rm -f "$WORK/share.stats"
  set +e
  env MEMPLAN_PLAN="$WORK/sort.plan" MEMPLAN_MIN_HIT_RATE=$pct MEMPLAN_STATS="$WORK/share.stats" \
    MEMPLAN_MODE=replay LD_PRELOAD="$LIB" sh -c "$script" >"$WORK/share.out" 2>"$WORK/share.err"
  got=$?
  set -e
  cmp -s "$WORK/expected.out" "$WORK/share.out" || fail "share $pct: output changed"
  want=$(python3 -S - "$WORK/share.stats" "$pct" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
hits, allocs = sum(l["hits"] for l in lines), sum(l["allocs"] for l in lines)
assert 0 < hits < allocs, (hits, allocs)
print(1 if hits * 100 < float(sys.argv[2]) * allocs else 0)
PY
)
  [ "$got" = "$want" ] || fail "share $pct: exit $got, not $want ($(cat "$WORK/share.err"))"
  if [ "$want" = 1 ]; then
    one_line share "$WORK/sort.plan: [0-9]+ of [0-9]+ allocations served from the arena, under MEMPLAN_MIN_HIT_RATE=$pct; exit status 1"
  else
    [ ! -s "$WORK/share.err" ] || fail "share $pct: printed $(cat "$WORK/share.err")"
  fi
done

# An unusable plan: its own line at start-up in each process, and the verdict.
head -c 100 "$WORK/sh.plan" >"$WORK/cut.plan"
strict cut 1 MEMPLAN_PLAN="$WORK/cut.plan" MEMPLAN_STRICT=1
[ "$(tail -n 1 "$WORK/cut.err")" = "memplan: $WORK/cut.plan: the plan could not be used; exit status 1" ] ||
  fail "cut: $(cat "$WORK/cut.err")"
# A plan cut while the command runs: a process that starts after finds it
# unreadable, runs on libc and writes its line all the same, which fails the
# command.
script_ok=$script
script="sort -n '$WORK/in.txt' | md5sum; : >'$WORK/late.plan'; sort -n '$WORK/in.txt' | md5sum"
sh -c "$script" >"$WORK/expected.out"
cp "$WORK/sh.plan" "$WORK/late.plan"
strict late 1 MEMPLAN_PLAN="$WORK/late.plan" MEMPLAN_STRICT=1 MEMPLAN_STATS="$WORK/late.stats"
[ "$(tail -n 1 "$WORK/late.err")" = "memplan: $WORK/late.plan: a process of the command could not read the plan; exit status 1" ] ||
  fail "late: $(cat "$WORK/late.err")"
script=$script_ok
sh -c "$script" >"$WORK/expected.out"
# A bad setting fails the command too, rather than letting it pass unchecked,
# in the one line that names it.
for setting in MEMPLAN_MIN_HIT_RATE=most MEMPLAN_STRICT=yes; do
  strict bad-setting 1 MEMPLAN_PLAN="$WORK/sh.plan" "$setting"
  [ "$(grep -c . "$WORK/bad-setting.err")" = 1 ] &&
    grep -q "^memplan: ${setting%%=*}='${setting#*=}' is not .*; the command will end with status 1$" \
      "$WORK/bad-setting.err" || fail "$setting: $(cat "$WORK/bad-setting.err")"
done
# Digits with an optional fraction only, as memplan replay --min-hit-rate:
# strtod's hexadecimal and exponents are bad settings too.
for rate in 0x20 1e1 -0 ' 5'; do
  strict odd-rate 1 MEMPLAN_PLAN="$WORK/sh.plan" MEMPLAN_MIN_HIT_RATE="$rate"
done

# A child forked without exec, that ends by _exit after other processes of
# the command wrote their lines, keeps its status: only the command's first
# process judges it.
cat >"$WORK/fork.py" <<'PY'
import os, subprocess
subprocess.run(["sort", "-n", "/dev/null"], check=True)
pid = os.fork()
if pid == 0:
    os._exit(0)
print("child exited with", os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
PY
python3 "$WORK/fork.py" >"$WORK/fork.plain"
set +e
MEMPLAN_STRICT=1 MEMPLAN_MODE=replay MEMPLAN_PLAN="$WORK/ls.plan" MEMPLAN_STATS="$WORK/fork.stats" \
  LD_PRELOAD="$LIB" python3 "$WORK/fork.py" >"$WORK/fork.out" 2>"$WORK/fork.err"
got=$?
set -e
cmp -s "$WORK/fork.plain" "$WORK/fork.out" || fail "fork: $(cat "$WORK/fork.out")"
[ "$got" = 1 ] || fail "fork: exit $got, not 1"
one_line fork "$WORK/ls.plan: no process of the command found its program in the plan; exit status 1"

# sort closes its stderr before it exits: the line is still seen.
set +e
MEMPLAN_STRICT=1 MEMPLAN_MODE=replay MEMPLAN_PLAN="$WORK/ls.plan" LD_PRELOAD="$LIB" \
  sort -n "$WORK/in.txt" >/dev/null 2>"$WORK/closed.err"
got=$?
set -e
[ "$got" = 1 ] || fail "closed: exit $got, not 1"
one_line closed "$WORK/ls.plan: the plan has no image of this program; exit status 1"
echo "strict raw: ok"

# The verdict goes to the program's stderr, never to a file of the program's:
# one that closes every descriptor past 2 (a daemon) and opens files of its
# own may have one at the number of memplan's copy of stderr (3 under a
# limit of 32 descriptors), where the verdict once landed.
mkdir -p "$WORK/closer"
set +e
(ulimit -n 32; env MEMPLAN_MODE=replay MEMPLAN_STRICT=1 MEMPLAN_PLAN="$WORK/ls.plan" LD_PRELOAD="$LIB" \
  "$PROGRAMS/fd_closer" 2000 "$WORK/closer" >"$WORK/closer.out" 2>"$WORK/closer.err")
rc=$?
set -e
[ "$rc" -eq 1 ] || fail "closer: status $rc, not strict's 1: $(cat "$WORK/closer.err")"
for f in "$WORK"/closer/out*; do
  [ "$(cat "$f")" = data ] || fail "closer: $f holds $(cat "$f")"
done
grep -q "exit status 1" "$WORK/closer.err" || fail "closer: the verdict is not on stderr: $(cat "$WORK/closer.err")"
echo "the verdict goes to stderr, not to the program's files"
