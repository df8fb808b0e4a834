#!/usr/bin/env bash
# scripts/bench/callgrind_calls.py, which writes the benchmarks' table of
# instructions and cache misses per allocation call, on real callgrind
# profiles of a program that makes a known number of calls: the calls it
# counts are exactly the program's, its costs per call are those of the
# profile, the cache-miss table comes with a simulated cache and only then,
# --program's table of whole programs gives a profile's totals, and --write
# replaces its section instead of adding another.
. "$(dirname "$0")/lib.sh"
: "${SOURCE_ROOT:?}" "${PROGRAMS:?}"
command -v valgrind >/dev/null || { echo "SKIP: valgrind is not installed"; exit 77; }
calls=$SOURCE_ROOT/scripts/bench/callgrind_calls.py
prog=$PROGRAMS/alloc_calls
n=300

valgrind -q --tool=callgrind --cache-sim=yes --D1=49152,12,64 --LL=2097152,16,64 \
  --callgrind-out-file="$WORK/sim.out" "$prog" $n >"$WORK/sim.stdout" 2>"$WORK/sim.err" ||
  fail "callgrind with a simulated cache: $(cat "$WORK/sim.err")"
valgrind -q --tool=callgrind --callgrind-out-file="$WORK/plain.out" "$prog" $n \
  >"$WORK/plain.stdout" 2>"$WORK/plain.err" || fail "callgrind: $(cat "$WORK/plain.err")"
[ "$(cat "$WORK/sim.stdout")" = "$(( n * 6 ))" ] || fail "alloc_calls printed $(cat "$WORK/sim.stdout")"

status 0 python3 "$calls" --exe alloc_calls "sim=$WORK/sim.out" "plain=$WORK/plain.out"
grep -qx "Calls counted: malloc $n, calloc $n, realloc $n, free $(( 2 * n ))." "$WORK/out" ||
  fail "calls counted: $(grep -i calls "$WORK/out")"
# Instructions per call: the same in both profiles (the cache simulation
# counts the same instructions), and as callgrind_annotate adds them up from
# the profile's inclusive costs of work's calls.
sim_row=$(grep '^| sim |' "$WORK/out") || fail "no row for sim: $(cat "$WORK/out")"
plain_row=$(grep '^| plain |' "$WORK/out") || fail "no row for plain"
[ "$(echo "$sim_row" | cut -d'|' -f3-7)" = "$(echo "$plain_row" | cut -d'|' -f3-7)" ] ||
  fail "instructions differ with the cache simulated: $sim_row / $plain_row"
malloc_ir=$(echo "$sim_row" | cut -d'|' -f3 | tr -d ' ')
awk -v v="$malloc_ir" 'BEGIN { exit !(v > 10 && v < 2000) }' || fail "malloc Ir/call: $malloc_ir"
# The whole program's instructions are the profile's total.
total=$(sed -n 's/^\(summary\|totals\): \([0-9]*\).*/\2/p' "$WORK/plain.out" | head -n 1)
[ -n "$total" ] || fail "no total in the profile"
total=$(python3 -c "print('{:,}'.format($total))")
echo "$plain_row" | grep -qF "| $total |" || fail "whole program: $plain_row, not $total"
# A profile without cache events gives no cache table, even beside one with.
! grep -q 'D1 misses' "$WORK/out" || fail "a cache table though plain has no cache events"
status 0 python3 "$calls" --exe alloc_calls "sim=$WORK/sim.out"
grep -q '^| allocator | malloc (D1 misses/call)' "$WORK/out" || fail "no cache table: $(cat "$WORK/out")"
d1=$(grep '^| sim |' "$WORK/out" | tail -n 1 | cut -d'|' -f7 | tr -d ' ')
awk -v v="$d1" 'BEGIN { exit !(v >= 0 && v < 50) }' || fail "D1 misses per call: $d1"

# --write: the section replaced in place, the rest of the file kept.
printf '# Title\n\ntext before\n' >"$WORK/doc.md"
status 0 python3 "$calls" --exe alloc_calls --write "$WORK/doc.md" --note "first" "sim=$WORK/sim.out"
printf 'text after\n' >>"$WORK/doc.md"
status 0 python3 "$calls" --exe alloc_calls --write "$WORK/doc.md" --note "second" "sim=$WORK/sim.out"
[ "$(grep -c 'instructions.sh: begin' "$WORK/doc.md")" = 1 ] || fail "two sections: $(cat "$WORK/doc.md")"
grep -qx second "$WORK/doc.md" && ! grep -qx first "$WORK/doc.md" || fail "section not replaced"
head -n 3 "$WORK/doc.md" | grep -qx 'text before' && tail -n 1 "$WORK/doc.md" | grep -qx 'text after' ||
  fail "the text around the section moved: $(cat "$WORK/doc.md")"
# --program: a whole program's totals, instructions and data misses (reads and
# writes), as the profile's totals line has them; the first is the baseline.
status 0 python3 "$calls" --exe alloc_calls --program "base=$WORK/sim.out" \
  --program "again=$WORK/sim.out" --program-note "whole" "sim=$WORK/sim.out"
read -r want_ir want_d1 < <(python3 - "$WORK/sim.out" <<'EOF'
import sys
for line in open(sys.argv[1]):
    if line.startswith("events:"):
        events = line.split()[1:]
    elif line.startswith(("summary:", "totals:")):
        t = dict(zip(events, map(int, line.split()[1:])))
        print("{:,} {:,}".format(t["Ir"], t["D1mr"] + t["D1mw"]))
        break
EOF
)
grep -qx whole "$WORK/out" || fail "no note before the table of whole programs"
grep -qF "| again | $want_ir | 1.00× | $want_d1 | 1.00× |" "$WORK/out" ||
  fail "whole program, not Ir $want_ir and D1 misses $want_d1: $(grep '^| again |' "$WORK/out")"
echo ok
