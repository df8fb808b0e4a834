#!/usr/bin/env bash
# A plan that does not fit on its file system (a 1 MiB tmpfs): one memplan line
# says the plan could not be written, and nothing more (no 'no process wrote a
# plan' after it), and a plan already there is kept, as one more line says;
# the program's output and status are unchanged, and no torn plan or
# temporary file is left. (memplan record once followed the process's
# own line with a wrong 'no process wrote a plan'.) Needs to mount a tmpfs
# (root); skipped otherwise.
. "$(dirname "$0")/lib.sh"

mkdir "$WORK/small"
if ! mount -t tmpfs -o size=1m tmpfs "$WORK/small" 2>"$WORK/mount.err"; then
  echo "SKIP: cannot mount a tmpfs: $(cat "$WORK/mount.err")"
  exit 77
fi
MOUNTS+=("$WORK/small")

# many_sites 1000: a plan of some 3 MiB (checked, recorded elsewhere).
prog=("$PROGRAMS/many_sites" 1000)
run_plain big "${prog[@]}"
"$MEMPLAN" record -o "$WORK/big-elsewhere.plan" -- "${prog[@]}" >/dev/null ||
  fail "cannot record the program where there is room"
size=$(stat -c %s "$WORK/big-elsewhere.plan")
[ "$size" -gt $((1024 * 1024)) ] || fail "the plan is only $size bytes: the test needs more than 1 MiB"

check_full() {
  local name=$1 mode=$2
  same_as_plain "$name" "$mode"
  [ "$(grep -c 'memplan:' "$WORK/$name.$mode.err")" -eq 1 ] ||
    fail "$name ($mode): expected one memplan line, got: $(cat "$WORK/$name.$mode.err")"
  grep -q "memplan: .*cannot write the plan" "$WORK/$name.$mode.err" ||
    fail "$name ($mode): the line does not say the write failed: $(cat "$WORK/$name.$mode.err")"
  ! grep -q "no process wrote a plan" "$WORK/$name.$mode.err" ||
    fail "$name ($mode): $(cat "$WORK/$name.$mode.err")"
  absent_or_valid "$WORK/small/big.plan" || fail "$name ($mode): a torn plan was left"
  leftovers=$(find "$WORK/small" -mindepth 1 ! -name big.plan | wc -l)
  [ "$leftovers" -eq 0 ] || fail "$name ($mode): files left behind: $(ls -a "$WORK/small")"
  echo "$name ($mode): $(cat "$WORK/$name.$mode.err")"
}

cp "$WORK/big.plain.out" "$WORK/cli.plain.out"; cp "$WORK/big.plain.rc" "$WORK/cli.plain.rc"
run cli record "$MEMPLAN" record -o "$WORK/small/big.plan" -- "${prog[@]}"
check_full cli record

cp "$WORK/big.plain.out" "$WORK/raw.plain.out"; cp "$WORK/big.plain.rc" "$WORK/raw.plain.rc"
MEMPLAN_MODE=record MEMPLAN_PLAN="$WORK/small/big.plan" LD_PRELOAD="$LIB" \
  run raw record "${prog[@]}"
check_full raw record
# A plan already there is kept, and memplan says so (it said only that the
# new one could not be written).
"$MEMPLAN" record -o "$WORK/small/big.plan" -- true >/dev/null 2>&1 || fail "cannot record true"
cp "$WORK/small/big.plan" "$WORK/true.plan"
run kept record "$MEMPLAN" record -o "$WORK/small/big.plan" -- "${prog[@]}"
grep -q "memplan: .*cannot write the plan" "$WORK/kept.record.err" &&
  grep -q "memplan: .*big.plan: the plan already there is left as it was" "$WORK/kept.record.err" ||
  fail "over a plan already there: $(cat "$WORK/kept.record.err")"
cmp -s "$WORK/true.plan" "$WORK/small/big.plan" || fail "the plan already there was changed"
rm -f "$WORK/small/big.plan"
echo "plan on a full file system: ok"

# A full TMPDIR: the statistics go to /tmp, and a --strict replay passes,
# with its summary. (The empty file was made all the same, every line
# written to it then failed, and --strict failed the run.)
"$MEMPLAN" record -o "$WORK/sort.plan" -- sort -n /dev/null >/dev/null
dd if=/dev/zero of="$WORK/small/fill" bs=64k 2>/dev/null || true
run tmpfull replay env TMPDIR="$WORK/small" "$MEMPLAN" replay --strict -p "$WORK/sort.plan" -- sort -n /dev/null
[ "$(rc tmpfull replay)" -eq 0 ] && grep -Eq "^memplan replay: [0-9.]+% of" "$WORK/tmpfull.replay.err" ||
  fail "full TMPDIR: status $(rc tmpfull replay): $(cat "$WORK/tmpfull.replay.err")"
[ -z "$(find "$WORK/small" -name 'memplan-stats.*')" ] || fail "full TMPDIR: a statistics file was left there"
echo "statistics with a full TMPDIR: ok"
