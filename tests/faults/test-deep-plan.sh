#!/usr/bin/env bash
# A plan whose call-site depth is above what replay's frame buffers hold (64),
# with a valid checksum, is refused in one line that names the depth, and the
# program runs normally on libc. (The format once allowed 256, and replay
# unwound that many frames into 64-frame buffers: a smashed stack.)
. "$(dirname "$0")/lib.sh"
: "${PLAN_DEPTH:?PLAN_DEPTH must name the plan-depth tool}"

check_depths() {
  local name=$1; shift
  run_plain $name "$@"
  run_record $name "$@"
  same_as_plain $name record
  valid_plan "$WORK/$name.plan" || fail "$name: no sound plan recorded"
  for depth in 80 128 200; do
    "$PLAN_DEPTH" "$WORK/$name.plan" "$WORK/$name-$depth.plan" $depth ||
      fail "$name: cannot rewrite the depth"
    run $name-$depth replay bounded 60 "$MEMPLAN" replay -p "$WORK/$name-$depth.plan" -- "$@"
    cp "$WORK/$name.plain.out" "$WORK/$name-$depth.plain.out"
    cp "$WORK/$name.plain.rc" "$WORK/$name-$depth.plain.rc"
    same_as_plain $name-$depth replay
    # The raw form, where every process reads the plan itself.
    MEMPLAN_MODE=replay MEMPLAN_PLAN="$WORK/$name-$depth.plan" LD_PRELOAD="$LIB" \
      run $name-$depth raw "$@"
    same_as_plain $name-$depth raw
    for mode in replay raw; do
      lines=$(grep -c 'memplan:' "$WORK/$name-$depth.$mode.err" || true)
      [ "$lines" -eq 1 ] ||
        fail "$name depth $depth ($mode): expected one memplan line, got: $(head -c 400 "$WORK/$name-$depth.$mode.err")"
      grep -q "memplan: .*depth $depth" "$WORK/$name-$depth.$mode.err" ||
        fail "$name depth $depth ($mode): the line does not name the depth: $(cat "$WORK/$name-$depth.$mode.err")"
    done
  done
  echo "$name: $(cat "$WORK/$name-200.replay.err")"
}

check_depths deep "$PROGRAMS/deep_realloc" 200
if command -v python3 >/dev/null; then
  # The interpreter itself, not a wrapper (pyenv's shim is a shell script).
  PYTHON=$(python3 -c 'import sys; print(sys.executable)')
  check_depths python "$PYTHON" -c 'print(sum(range(1000)))'
else
  echo "python3 not installed: its part skipped"
fi
echo "deep plans: ok"
