#!/usr/bin/env bash
# `memplan plan PLAN -o PLAN2` on a plan of several process images, each a
# packing instance the planner cannot settle: the time limit holds for the
# whole plan (loosely: --time-limit 2 ends well within 10 s, where one budget
# per image took 2 s each), it prints one summary line (not one per image), and
# the plan it writes is sound, with no image's arena bigger than before. On a
# terminal it shows its progress.
. "$(dirname "$0")/lib.sh"
: "${PROGRAMS:?}"

# Random instances: their lower bound is seldom reachable, so the planner works
# on each until its share of the budget runs out.
for i in 1 2 3 4 5 6 7 8; do
  awk -v seed="$i" 'BEGIN {
    srand(seed); print "id,lower,upper,size"
    for (k = 0; k < 300; k++) {
      lo = int(rand() * 1000); print k "," lo "," lo + 1 + int(rand() * 300) "," 1 + int(rand() * 100000)
    }
  }' >"$WORK/instance$i.csv"
done
status 0 "$MEMPLAN" record -o "$WORK/many.plan" -- sh -c \
  "for i in 1 2 3 4 5 6 7 8; do '$PROGRAMS/dsa_replay' '$WORK'/instance\$i.csv; done"
"$MEMPLAN" show --json "$WORK/many.plan" >"$WORK/before.json"
images=$(python3 -S -c 'import json, sys; print(len(json.load(sys.stdin)["images"]))' <"$WORK/before.json")
[ "$images" -ge 8 ] || fail "the recording has $images images, not 8 or more"

start=$(date +%s%N)
status 0 "$MEMPLAN" plan "$WORK/many.plan" -o "$WORK/re.plan" --time-limit 2 </dev/null
took_ms=$((($(date +%s%N) - start) / 1000000))
echo "memplan plan --time-limit 2 on $images images: $took_ms ms"
[ "$took_ms" -lt 10000 ] || fail "memplan plan --time-limit 2 took $took_ms ms"
[ "$(wc -l <"$WORK/err")" -eq 1 ] || fail "not one summary line: $(head -c 600 "$WORK/err")"
grep -q "^memplan: $WORK/many.plan: $images process images, [0-9]* allocations, arena [0-9]* -> [0-9]* bytes" \
  "$WORK/err" || fail "summary: $(cat "$WORK/err")"

# Sound, and no image got bigger.
"$MEMPLAN" show --json "$WORK/re.plan" >"$WORK/after.json" || fail "memplan show of the new plan failed"
python3 -S - "$WORK/before.json" "$WORK/after.json" <<'PY' || fail "an image got bigger"
import json, sys
before, after = (json.load(open(p))["images"] for p in sys.argv[1:3])
assert len(before) == len(after)
for b, a in zip(before, after):
    assert a["allocations"] == b["allocations"]
    assert a["arena_bytes"] <= b["arena_bytes"], (b["exe"], b["arena_bytes"], a["arena_bytes"])
PY

# On a terminal: the image being planned, on a line it rewrites.
if script -qec true /dev/null >/dev/null 2>&1; then
  script -qec "'$MEMPLAN' plan '$WORK/many.plan' -o '$WORK/tty.plan' --time-limit 1" \
    "$WORK/typescript" >/dev/null </dev/null || fail "memplan plan on a terminal failed"
  grep -q "image [0-9]* of $images" "$WORK/typescript" ||
    fail "no progress on a terminal: $(head -c 600 "$WORK/typescript")"
fi
echo "ok"
