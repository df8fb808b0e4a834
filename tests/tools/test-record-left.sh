#!/usr/bin/env bash
# memplan record and the processes its command leaves running (a script's
# background job, a daemon): it waits for them (--wait-left, 10 s by default;
# saying so after the first second), so that their images are in the plan
# when it returns, re-planned and with their symbols, like every other image.
# One still running when the wait is over is named, and adds its image when it
# ends, packed but not re-planned, which memplan plan then does. ^C cuts the
# wait short. The command's exit status is memplan's whatever the wait.
. "$(dirname "$0")/lib.sh"
: "${PROGRAMS:?}"

# A packing instance whose layout at exit (the online allocator's) the planner
# improves (as in test-record-id.sh).
awk 'BEGIN {
  srand(7); print "id,lower,upper,size"
  for (k = 0; k < 400; k++) {
    lo = int(rand() * 1000); print k "," lo "," lo + 1 + int(rand() * 300) "," 1 + int(rand() * 100000)
  }
}' >"$WORK/instance.csv"
# Two seconds before it allocates: memplan says it waits once the job outlives
# the wait's quiet first second, which starts when sh has ended, and sh ends
# only once it has packed and written its own recording; with one second, on a
# loaded machine, the job ended inside it.
late="(sleep 2; exec '$PROGRAMS/dsa_replay' '$WORK/instance.csv' >/dev/null)"

# The sleepers below, named by memplan's messages, do not outlive the test.
sleepers=()
trap 'kill "${sleepers[@]}" 2>/dev/null || true; rm -rf "$WORK"' EXIT
# end_sleeper FILE: kills the sleeper that memplan named in FILE.
end_sleeper() {
  local pid
  pid=$(grep -o "pid [0-9]* sleep, left running" "$1" | grep -o "[0-9]*" | head -1)
  [ -n "$pid" ] || fail "no sleeper named: $(cat "$1")"
  sleepers+=("$pid")
  kill "$pid"
  # It writes its plan as it ends, under the lock of the directory the next
  # case's memplan writes in: a case timed while it still held it failed.
  for _ in $(seq 200); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
}

# late_image PLAN: "ARENA SYMBOLS" of the plan's dsa_replay image, or nothing.
late_image() {
  "$MEMPLAN" show --json "$1" | python3 -S -c '
import json, sys
for i in json.load(sys.stdin)["images"]:
    if i["exe"].endswith("/dsa_replay"):
        print(i["arena_bytes"], i["symbols_stored"])'
}

# Waited for: the image is there when memplan returns, re-planned, with symbols.
status 3 "$MEMPLAN" record --plan-seconds 1 -o "$WORK/waited.plan" -- sh -c "$late & exit 3"
grep -q "waiting up to 10 s for what sh left running (pid [0-9]*" "$WORK/err" ||
  fail "no word of the wait: $(cat "$WORK/err")"
grep -q "goes on" "$WORK/err" && fail "the background job was left behind: $(cat "$WORK/err")"
read -r waited waited_symbols <<<"$(late_image "$WORK/waited.plan")"
[ -n "$waited" ] || fail "the background job's image is not in the plan when memplan returns"
[ "$waited_symbols" = True ] || fail "the background job's image has no symbols"

# Not waited for (--wait-left 0, quietly): added as packed at its exit, which
# memplan plan improves.
status 0 "$MEMPLAN" record --wait-left 0 --plan-seconds 1 -o "$WORK/left.plan" -- sh -c "$late & exit 0"
[ ! -s "$WORK/err" ] || fail "--wait-left 0 said: $(cat "$WORK/err")"
[ -z "$(late_image "$WORK/left.plan")" ] || fail "--wait-left 0 waited for the background job"
for _ in $(seq 100); do
  [ -n "$(late_image "$WORK/left.plan")" ] && break
  sleep 0.1
done
read -r packed _ <<<"$(late_image "$WORK/left.plan")"
[ -n "$packed" ] || fail "the background job never added its image"
status 0 "$MEMPLAN" plan "$WORK/left.plan" -o "$WORK/left.plan"
read -r replanned _ <<<"$(late_image "$WORK/left.plan")"
echo "arena of the background job's image: waited for $waited, added later $packed, re-planned $replanned"
[ "$waited" -lt "$packed" ] || fail "the image waited for was not re-planned: $waited, packed $packed"
[ "$replanned" -lt "$packed" ] || fail "memplan plan did not re-plan the late image: $replanned"

# A process that stays: the wait is bounded, and says who goes on.
start=$(date +%s)
status 0 "$MEMPLAN" record --wait-left 1 -o "$WORK/stay.plan" -- sh -c "sleep 60 & exit 0"
[ $(($(date +%s) - start)) -lt 10 ] || fail "--wait-left 1 waited $(($(date +%s) - start)) s"
grep -q "stay.plan: pid [0-9]* sleep, left running by sh, goes on" "$WORK/err" ||
  fail "the sleeper is not named: $(cat "$WORK/err")"
end_sleeper "$WORK/err"

# ^C while waiting: one more second, then memplan plans and returns.
"$MEMPLAN" record -o "$WORK/int.plan" -- sh -c "sleep 60 & exit 0" >"$WORK/int.out" 2>"$WORK/int.err" &
recorder=$!
for _ in $(seq 100); do
  grep -q waiting "$WORK/int.err" && break
  sleep 0.1
done
grep -q waiting "$WORK/int.err" || fail "no wait to interrupt: $(cat "$WORK/int.err")"
start=$(date +%s)
kill -INT "$recorder"
set +e
wait "$recorder"
got=$?
set -e
[ "$got" = 0 ] || fail "memplan record exited $got after ^C in the wait: $(cat "$WORK/int.err")"
[ $(($(date +%s) - start)) -lt 5 ] || fail "^C did not cut the wait short"
grep -q "int.plan: pid [0-9]* sleep, left running by sh, goes on" "$WORK/int.err" ||
  fail "the sleeper is not named after ^C: $(cat "$WORK/int.err")"
end_sleeper "$WORK/int.err"
[ -s "$WORK/int.plan" ] || fail "no plan after ^C in the wait"

# ^C as soon as the sleeper is memplan's, in the wait's quiet first second:
# the same.
"$MEMPLAN" record -o "$WORK/quiet.plan" -- sh -c "sleep 60 & exit 0" >"$WORK/quiet.out" \
  2>"$WORK/quiet.err" &
recorder=$!
for _ in $(seq 200); do
  pgrep -P "$recorder" -x sleep >/dev/null && break
  sleep 0.01
done
start=$(date +%s)
kill -INT "$recorder"
wait "$recorder" || fail "memplan record failed after ^C in the quiet wait: $(cat "$WORK/quiet.err")"
[ $(($(date +%s) - start)) -lt 5 ] || fail "^C in the quiet wait did not cut it short"
end_sleeper "$WORK/quiet.err"

# ^C as the command ends, while memplan still waits for it: passed on to a
# command that ignores it, it stops the wait all the same (it was lost, and
# memplan waited the whole 10 s). The command sends it itself, so that the
# moment is sure.
start=$(date +%s)
status 0 "$MEMPLAN" record -o "$WORK/late.plan" -- sh -c 'trap "" INT; sleep 60 & kill -INT $PPID; exit 0'
[ $(($(date +%s) - start)) -lt 5 ] || fail "^C as the command ended did not cut the wait short"
end_sleeper "$WORK/err"

status 2 "$MEMPLAN" record --wait-left -1 -o "$WORK/x.plan" -- true
grep -q -- "--wait-left takes seconds from 0 to 86400" "$WORK/err" || fail "$(cat "$WORK/err")"

# memplan replay waits as record does: the background job's statistics are in
# the summary, and --strict judges it. (Replay summed up as the script ended:
# "no process of the command found its program in the plan", status 1, for a
# job served from the arena.)
status 0 "$MEMPLAN" replay --strict -p "$WORK/waited.plan" --stats "$WORK/bg.jsonl" -- \
  sh -c "$late & exit 0"
grep -q "waiting up to 10 s for what sh left running (pid [0-9]*.*: its statistics are part of the summary" \
  "$WORK/err" || fail "replay: no word of the wait: $(cat "$WORK/err")"
grep -q '"exe":"[^"]*/dsa_replay".*"match":"exact"' "$WORK/bg.jsonl" ||
  fail "replay: no line of the background job: $(cat "$WORK/bg.jsonl")"
grep -q "memplan replay: 100% of [0-9,]* allocations served from the arena by [4-9] process images" \
  "$WORK/err" || fail "replay: the background job is not in the summary: $(cat "$WORK/err")"
start=$(date +%s)
status 0 "$MEMPLAN" replay --wait-left 1 -p "$WORK/waited.plan" -- sh -c "sleep 60 & exit 0"
[ $(($(date +%s) - start)) -lt 10 ] || fail "replay --wait-left 1 waited $(($(date +%s) - start)) s"
grep -q "pid [0-9]* sleep, left running by sh, goes on: its statistics are not in this summary" \
  "$WORK/err" || fail "replay: the sleeper is not named: $(cat "$WORK/err")"
end_sleeper "$WORK/err"
status 2 "$MEMPLAN" replay --wait-left x -p "$WORK/waited.plan" -- true
echo "ok"
