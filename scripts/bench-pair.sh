#!/usr/bin/env bash
# Times two ways of running one command side by side, for a difference smaller
# than this machine's drift: each round starts A and B at the same moment, one
# per core (taskset), swapping cores from round to round, so both see the same
# load. Prints the median and quartiles of time(B) / time(A) over the rounds.
#
#   scripts/bench-pair.sh [-n ROUNDS] PLAN A B -- CMD [ARGS...]
#
# A and B are each a path to a libmemplan.so, run in replay of PLAN
# (MEMPLAN_MODE=replay MEMPLAN_PLAN=PLAN LD_PRELOAD=...); the word glibc, run
# without memplan; or preload:LIB, run with another allocator's LIB in
# LD_PRELOAD (preload:/usr/lib/x86_64-linux-gnu/libmimalloc.so.2, say) and
# without memplan. CMD's output is discarded. ROUNDS defaults to 30. Both runs of
# a round share the machine's caches and memory bandwidth, which a run alone
# does not: read the ratio as which is faster, not as a wall time.
set -euo pipefail

usage() {
	echo "usage: scripts/bench-pair.sh [-n ROUNDS] PLAN A B -- CMD [ARGS...]" >&2
	echo "  A, B: a libmemplan.so to replay PLAN with, glibc, or preload:LIB" >&2
	exit 2
}

rounds=30
if [ "${1:-}" = -n ]; then
	[ $# -ge 2 ] || usage
	rounds=$2
	shift 2
fi
case "$rounds" in '' | *[!0-9]* | 0) usage ;; esac
if [ $# -lt 5 ] || [ "$4" != -- ]; then
	usage
fi
plan=$1 a=$2 b=$3
shift 4
for lib in "$a" "$b"; do
	if [ "$lib" != glibc ] && [ ! -f "${lib#preload:}" ]; then
		echo "bench-pair: $lib: no such library" >&2
		exit 1
	fi
done
[ -f "$plan" ] || { echo "bench-pair: $plan: no such plan" >&2; exit 1; }
[ "$(nproc)" -ge 2 ] || { echo "bench-pair: needs two cores" >&2; exit 1; }
command -v taskset >/dev/null || { echo "bench-pair: needs taskset (util-linux)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# run_on LIB CORE FILE CMD...: runs CMD with LIB on CORE, writing its wall
# seconds to FILE.
run_on() {
	local lib=$1 core=$2 file=$3 start end
	shift 3
	start=$(date +%s.%N)
	if [ "$lib" = glibc ]; then
		taskset -c "$core" "$@" >/dev/null 2>&1 || true
	elif [ "${lib#preload:}" != "$lib" ]; then
		LD_PRELOAD="${lib#preload:}" taskset -c "$core" "$@" >/dev/null 2>&1 || true
	else
		MEMPLAN_MODE=replay MEMPLAN_PLAN="$plan" LD_PRELOAD="$lib" \
			taskset -c "$core" "$@" >/dev/null 2>&1 || true
	fi
	end=$(date +%s.%N)
	echo "$start $end" | awk '{printf "%.6f\n", $2 - $1}' >"$file"
}

for ((i = 0; i < rounds; i++)); do
	ca=$((i % 2)) cb=$((1 - i % 2))
	run_on "$a" "$ca" "$work/a" "$@" &
	run_on "$b" "$cb" "$work/b" "$@" &
	wait
	paste "$work/a" "$work/b" >>"$work/times"
done
awk '{print $2 / $1, $1, $2}' "$work/times" | sort -n | awk -v a="$a" -v b="$b" '
	{ r[NR] = $1; ta += $2; tb += $3 }
	END {
		printf "B/A: median %.3f, quartiles %.3f-%.3f over %d rounds (mean s: A %.3f, B %.3f)\n",
			r[int((NR + 1) / 2)], r[int((NR + 3) / 4)], r[int((3 * NR + 1) / 4)], NR,
			ta / NR, tb / NR
		printf "A: %s\nB: %s\n", a, b
	}'
