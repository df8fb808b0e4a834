#!/usr/bin/env bash
# A file-size limit (ulimit -f, RLIMIT_FSIZE) that memplan's own writes run
# into: the write fails with EFBIG, which memplan says in one line, and the
# program ends as it would alone. (By default SIGXFSZ ends a process: a
# program whose limit its plan exceeded died with status 153 and lost its
# buffered output, and memplan itself died before passing the status on.)
. "$(dirname "$0")/lib.sh"

prog=$PROGRAMS/churn
"$prog" 50000 >"$WORK/plain.out" || fail "churn failed on its own"
# The plan is far bigger than 8 KiB; the program writes less than that.
set +e
(ulimit -f 8; "$MEMPLAN" record -o "$WORK/big.plan" -- "$prog" 50000 >"$WORK/record.out" 2>"$WORK/record.err")
rc=$?
set -e
[ "$rc" -eq 0 ] || fail "record under ulimit -f 8: status $rc: $(cat "$WORK/record.err")"
cmp -s "$WORK/plain.out" "$WORK/record.out" || fail "record under ulimit -f 8: output changed"
grep -q "big.plan: cannot write the plan: File too large" "$WORK/record.err" ||
  fail "record under ulimit -f 8: $(cat "$WORK/record.err")"
ls "$WORK" | grep -q 'big.plan.tmp' && fail "a temporary plan was left: $(ls "$WORK")"
# Replay whose statistics file is past the limit already: the same.
"$MEMPLAN" record -o "$WORK/ok.plan" -- "$prog" 50000 >/dev/null
head -c 20000 /dev/zero | tr '\0' 'x' >"$WORK/stats.jsonl"
set +e
(ulimit -f 8; env MEMPLAN_MODE=replay MEMPLAN_PLAN="$WORK/ok.plan" MEMPLAN_STATS="$WORK/stats.jsonl" \
  LD_PRELOAD="$LIB" "$prog" 50000 >"$WORK/replay.out" 2>"$WORK/replay.err")
rc=$?
set -e
[ "$rc" -eq 0 ] && cmp -s "$WORK/plain.out" "$WORK/replay.out" ||
  fail "replay under ulimit -f 8: status $rc: $(cat "$WORK/replay.err")"
grep -q "cannot write statistics: File too large" "$WORK/replay.err" ||
  fail "replay under ulimit -f 8: $(cat "$WORK/replay.err")"
echo "a file-size limit: memplan's writes fail in one line, the program runs as alone"
