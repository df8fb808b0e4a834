#!/usr/bin/env bash
# A call site is the whole stack to the configured depth, whatever its first
# frames share: a helper called from two functions at the same depth, and
# from two more through one middle function, makes four sites of 64
# allocations each, recorded and replayed. (A cache keyed by the helper's
# return address and depth once trusted the first stack it saw there: every
# call was credited to path_a's site.)
. "$(dirname "$0")/lib.sh"

run_plain same "$PROGRAMS/same_depth"
run_record same "$PROGRAMS/same_depth"
same_as_plain same record
"$MEMPLAN" show --json --top all "$WORK/same.plan" | python3 -S -c '
import json, sys
sites = json.load(sys.stdin)["images"][0]["top_sites"]
def by(path):
    return sum(s["allocations"] for s in sites
               if any(f.startswith(path + "+") or f.startswith(path + " ") for f in s["frames"][1:3])
               and s["frames"][0].startswith("helper"))
found = [by(p) for p in ("path_a", "path_b", "path_c", "path_d")]
if found != [64] * 4:
    sys.exit("allocations by path a, b, c, d: %s, not 64 each" % found)' ||
  fail "the helper's callers were not told apart"
run_replay same "$PROGRAMS/same_depth"
same_as_plain same replay
hits=$(stat_sum same hits)
[ "$hits" = "$(stat_sum same allocs)" ] || fail "replay served $hits of $(stat_sum same allocs)"
echo "one helper, four callers at one depth: four sites, all served"
