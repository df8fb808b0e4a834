#!/usr/bin/env bash
# The recording id's lowest bit (PLAN_RECORD_ID_REPLANNED): processes of a
# recording with an odd MEMPLAN_RECORD_ID, which memplan record gives them, only
# pack their image at exit, since memplan record plans the whole file
# afterwards; MEMPLAN_PLAN_SECONDS, if set, still has them plan. With an even
# id (the raw form's own) they plan within the default budget. Checked on a
# packing instance whose online layout the planner improves, by the arenas of
# the plans the processes wrote; then memplan record, whose plan is at least as
# small as the raw form's.
. "$(dirname "$0")/lib.sh"
: "${PROGRAMS:?}" "${PRELOAD_LIB:?}"

awk 'BEGIN {
  srand(7); print "id,lower,upper,size"
  for (k = 0; k < 400; k++) {
    lo = int(rand() * 1000); print k "," lo "," lo + 1 + int(rand() * 300) "," 1 + int(rand() * 100000)
  }
}' >"$WORK/instance.csv"

# arena_in PLAN: the arena of the plan's first image.
arena_in() {
  "$MEMPLAN" show --json "$1" |
    python3 -S -c 'import json, sys; print(json.load(sys.stdin)["images"][0]["arena_bytes"])'
}

# arena_of NAME ID [SECONDS]: records the instance's replay raw and prints the
# arena of the image the process wrote.
arena_of() {
  env MEMPLAN_MODE=record MEMPLAN_PLAN="$WORK/$1.plan" MEMPLAN_RECORD_ID="$2" \
    ${3:+MEMPLAN_PLAN_SECONDS=$3} LD_PRELOAD="$PRELOAD_LIB" \
    "$PROGRAMS/dsa_replay" "$WORK/instance.csv" >/dev/null || fail "recording $1 failed"
  arena_in "$WORK/$1.plan"
}

online=$(arena_of online 1000 0)
odd=$(arena_of odd 1001)
even=$(arena_of even 1002)
odd_set=$(arena_of odd-set 1003 1)
echo "online layout $online, odd id $odd, even id $even, odd id with MEMPLAN_PLAN_SECONDS=1 $odd_set"
[ "$odd" = "$online" ] || fail "an odd id planned at exit: arena $odd, online layout $online"
[ "$even" -lt "$online" ] || fail "an even id did not plan at exit: arena $even, online $online"
[ "$odd_set" -lt "$online" ] || fail "MEMPLAN_PLAN_SECONDS=1 was ignored: arena $odd_set"

status 0 "$MEMPLAN" record --plan-seconds 1 -o "$WORK/cli.plan" -- "$PROGRAMS/dsa_replay" "$WORK/instance.csv"
cli=$(arena_in "$WORK/cli.plan")
echo "memplan record: $cli"
[ "$cli" -le "$even" ] || fail "memplan record's arena $cli is bigger than the raw form's $even"
echo "ok"
