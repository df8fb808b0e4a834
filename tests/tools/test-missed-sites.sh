#!/usr/bin/env bash
# The call sites that fell off the plan, named: growing_table recorded with
# 500 rows and replayed with 20,000 sends its rows past the recording to libc.
# The statistics line names the sites that missed most by their keys in the
# plan, with their misses by reason; the summary line and memplan check
# --min-hit-rate name them by function; a forked child counts only its own;
# the output is the plain run's. Hostile statistics lines are read without
# harm.
. "$(dirname "$0")/lib.sh"
: "${PROGRAMS:?PROGRAMS must name the directory of the test programs}"
cd "$WORK"
table="$PROGRAMS/growing_table"
"$table" 20000 fork >plain.txt

status 0 "$MEMPLAN" record -o t.plan -- "$table" 500 fork
status 0 "$MEMPLAN" replay -p t.plan --stats s.jsonl -- "$table" 20000 fork
cmp -s out plain.txt || fail "replay changed the output"
"$MEMPLAN" show --json --top all t.plan >show.json

# The keys and counts against the plan and the line's own totals.
python3 -S - s.jsonl show.json <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
plan = json.load(open(sys.argv[2]))
keys = {}
for im in plan["images"]:
    for s in im["top_sites"]:
        keys[s["key"]] = s["functions"][0]["function"] if s["functions"] else None
main = [l for l in lines if "fork" not in l]
child = [l for l in lines if "fork" in l]
assert len(main) == 1 and len(child) == 1, lines
m = main[0]
missed = m["missed_sites"]
assert 1 <= len(missed) <= 5, missed
total = sum(m["misses"].values())
per_site = [sum(r.values()) for r in missed.values()]
assert sum(per_site) <= total, (per_site, total)
assert per_site == sorted(per_site, reverse=True), per_site
for key, reasons in missed.items():
    assert key in keys, ("not a key of the plan", key)
    for reason, n in reasons.items():
        assert n > 0 and n <= m["misses"][reason], (key, reason, n)
# Each row past the 500 recorded is a miss of table_row's site, but for those
# the arena's free space took (36 KiB at most: fewer than 800 rows).
rows = [k for k in missed if keys[k] == "table_row"]
assert len(rows) == 1, missed
assert missed[rows[0]].get("occurrence_beyond", 0) >= 20000 - 500 - 800, missed[rows[0]]
# The child replays its own image: none of its parent's misses.
assert child[0]["missed_sites"] == {} or all(
    sum(r.values()) <= 100 for r in child[0]["missed_sites"].values()), child[0]
print("missed sites:", {keys[k]: v for k, v in missed.items()})
PY

# The summary names the site that missed most of an image served under half
# of its calls, or under --min-hit-rate (after the reason most of its calls
# missed), and of no other; --strict's verdict
# gives the share as the line does.
status 0 "$MEMPLAN" replay -p t.plan -- "$table" 20000
cmp -s out plain.txt || fail "replay changed the output"
[ "$(grep -c . err)" = 1 ] || fail "summary: not one line: $(cat err)"
! grep -q 'most missed' err || fail "summary names a site of an image served over half: $(cat err)"
status 1 "$MEMPLAN" replay -p t.plan --min-hit-rate 90 -- "$table" 20000
cmp -s out plain.txt || fail "replay changed the output"
grep -Eq '^memplan replay: .* \((mostly [a-z_]+; )?most missed at (scratch|table_row) <- main \(growing_table\)\)$' err ||
  fail "summary does not name the site: $(cat err)"
share=$(sed -n 's/^memplan replay: \([0-9.]*%\) of .*$/\1/p' err)
[ -n "$share" ] && grep -q "^memplan: t.plan: --strict: $share served, under --min-hit-rate 90; exit status 1$" err ||
  fail "strict: the share differs from the summary's: $(cat err)"
echo "summary: $(head -n 1 err)"

# Most calls from stacks the plan has no site for (unknown_site, counted at
# no site), and one at a site of the plan (size_too_large): the summary names
# no site as where most missed, but what those calls were. (Once: "mostly
# unknown_site; most missed at helper <- via_f <- through_a", the site of the
# one.)
paths="$PROGRAMS/other_paths"
status 0 "$MEMPLAN" record -o paths.plan -- "$paths" fg 100
status 0 "$MEMPLAN" replay -p paths.plan --stats paths.jsonl -- "$paths" new-big 1000
grep -q '"unknown_site":999,.*"missed_sites":{"[0-9a-f]*":{"size_too_large":1}}' paths.jsonl ||
  fail "other_paths new-big: not the misses the test expects: $(cat paths.jsonl)"
grep -q '^memplan replay: .*; for other arguments: other_paths 0\.0% (mostly unknown_site: calls from stacks the plan has no site for)$' err ||
  fail "summary of unknown_site misses: $(cat err)"

# memplan check names the sites that missed most, with their misses.
status 1 "$MEMPLAN" check t.plan --min-hit-rate 90 --stats s.jsonl
grep -q '^FAIL --min-hit-rate 90%: .*; missed most: .*table_row <- main (growing_table) [0-9]' out ||
  fail "check does not name table_row: $(cat out)"
status 1 "$MEMPLAN" check t.plan --min-hit-rate 90 --stats s.jsonl --json
python3 -S - out s.jsonl <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))["violations"][0]
line = [json.loads(l) for l in open(sys.argv[2]) if '"fork"' not in l][0]
counts = sorted((sum(r.values()) for r in line["missed_sites"].values()), reverse=True)
assert [s["value"] for s in v["sites"]] == counts[:3], (v["sites"], counts)
assert any(s["name"] == "table_row <- main (growing_table)" for s in v["sites"]), v["sites"]
PY
# Passing the gate names nothing.
status 0 "$MEMPLAN" check t.plan --min-hit-rate 1 --stats s.jsonl
grep -q '^OK ' out || fail "check at 1%: $(cat out)"

# Hostile lines: keys that are no hex, too long, more sites than a line keeps
# (8: the first, as the library writes the most first), deeper objects,
# numbers where objects go. Read without harm; sites the plan does not have
# are named by their keys.
{
  printf '{"exe":"/x/growing_table","plan":"%s/t.plan","allocs":10,"hits":1,"misses":{"pool_full":9},' "$PWD"
  printf '"missed_sites":{"zz":{"pool_full":1},"123456789abcdef01":{"pool_full":2},'
  printf '"00000000000000aa":7,"00000000000000bb":{"a":{"b":1}},'
  for i in $(seq 10 30); do printf '"%016x":{"pool_full":%d},' "$i" "$i"; done
  printf '"00000000000000cc":{"pool_full":1000}}}\n'
} >hostile.jsonl
status 1 "$MEMPLAN" check t.plan --min-hit-rate 50 --stats hostile.jsonl
grep -q '^FAIL --min-hit-rate 50%: 10.00% of 10 allocation calls .*; missed most: site 0000000000000010 16, site 000000000000000f 15, site 000000000000000e 14$' out ||
  fail "hostile statistics: $(cat out)"
echo "check: $(head -c 300 out)"
