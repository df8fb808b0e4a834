#!/usr/bin/env bash
# A call site is the whole stack to the configured depth, whatever its first
# frames share: a helper called from two functions at the same depth, and
# from two more through one middle function, makes four sites of 64
# allocations each, recorded and replayed. (A cache keyed by the helper's
# return address and depth once trusted the first stack it saw there: every
# call was credited to path_a's site.)
. "$(dirname "$0")/lib.sh"

# all_served NAME CMD...: replayed with NAME's plan, the same output, and every
# allocation served.
all_served() {
  local name=$1; shift
  run_replay "$name" "$@"
  same_as_plain "$name" replay
  local hits
  hits=$(stat_sum "$name" hits)
  [ "$hits" = "$(stat_sum "$name" allocs)" ] ||
    fail "$name: replay served $hits of $(stat_sum "$name" allocs)"
}

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
all_served same "$PROGRAMS/same_depth"
echo "one helper, four callers at one depth: four sites, all served"

# Stacks that share the frame where an origin's first two stacks differed, and
# differ below it: split_paths's three sites, each of its own size, 64, 128
# and 64 calls, in the recording and all served when replayed.
run_plain split "$PROGRAMS/split_paths"
run_record split "$PROGRAMS/split_paths"
same_as_plain split record
"$MEMPLAN" show --json --top all "$WORK/split.plan" | python3 -S -c '
import json, sys
sites = [s for s in json.load(sys.stdin)["images"][0]["top_sites"]
         if s["frames"][0].startswith("helper")]
found = sorted((s["total_bytes"] // s["allocations"], s["allocations"], s["total_bytes"] % s["allocations"])
               for s in sites)
if found != [(100, 64, 0), (200, 128, 0), (300, 64, 0)]:
    sys.exit("sites of the helper (size, allocations, mixed): %s" % found)' ||
  fail "stacks that differ below their split were not told apart"
all_served split "$PROGRAMS/split_paths"
echo "one helper through two functions from two callers: three sites, all served"
