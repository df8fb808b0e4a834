#!/usr/bin/env bash
# SIGKILL at any moment of the plan's write (a plan of about 3 MB, written as
# the program returns): the plan path holds either nothing or a sound plan,
# never a torn file; and a sound plan that was there before stays sound.
# 120 kills, at moments spread from the program's last line to past the end of
# its write. (The old build passes this too: plans were already replaced
# atomically.)
. "$(dirname "$0")/lib.sh"

prog=("$PROGRAMS/many_sites" 1000)
# How long the write takes: from the program's line to its end (the longest
# of three runs).
write_us=0
for _ in 1 2 3; do
  rm -rf "$WORK/k"
  mkdir "$WORK/k"
  exec 3< <(MEMPLAN_MODE=record MEMPLAN_PLAN="$WORK/k/p.plan" LD_PRELOAD="$LIB" exec "${prog[@]}")
  pid=$!
  read -r -u 3 line || fail "the program printed nothing"
  marked=$(date +%s%N)
  wait "$pid" || fail "the recorded program failed"
  ended=$(date +%s%N)
  exec 3<&-
  valid_plan "$WORK/k/p.plan" || fail "no sound plan without a kill"
  took=$(((ended - marked) / 1000))
  [ "$took" -le "$write_us" ] || write_us=$took
done
cp "$WORK/k/p.plan" "$WORK/before.plan"
echo "plan write $((write_us / 1000)) ms at most, $(stat -c %s "$WORK/before.plan") bytes"
# Delays from 0 to 1.5 times the write (20 ms at least), so that some kills
# come too late.
span_us=$((write_us * 3 / 2))
[ "$span_us" -ge 20000 ] || span_us=20000

# Sleeping without starting a process (sleep(1) would add a fork and an exec
# to every delay): a read with a timeout from a FIFO nobody writes.
mkfifo "$WORK/never"
exec 4<>"$WORK/never"
RANDOM=4242
absent=0 valid=0
for i in $(seq 1 120); do
  rm -rf "$WORK/k"
  mkdir "$WORK/k"
  # Every other run replaces a sound plan already there.
  if [ $((i % 2)) -eq 0 ]; then cp "$WORK/before.plan" "$WORK/k/p.plan"; fi
  delay_us=$(((RANDOM * 32768 + RANDOM) % span_us))
  exec 3< <(MEMPLAN_MODE=record MEMPLAN_PLAN="$WORK/k/p.plan" LD_PRELOAD="$LIB" exec "${prog[@]}" 2>/dev/null)
  pid=$!
  read -r -u 3 line || true
  printf -v delay '0.%06d' "$delay_us"
  read -r -t "$delay" -u 4 || true
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  exec 3<&-
  if [ -e "$WORK/k/p.plan" ]; then
    valid_plan "$WORK/k/p.plan" ||
      fail "kill $i, $delay_us us after the program's line: a torn plan ($(stat -c %s "$WORK/k/p.plan") bytes)"
    valid=$((valid + 1))
  else
    [ $((i % 2)) -eq 1 ] || fail "kill $i, $delay_us us after the program's line: the plan that was there is gone"
    absent=$((absent + 1))
  fi
done
echo "120 kills: $valid sound plans, $absent without a plan, none torn"
echo "SIGKILL during the plan write: ok"
