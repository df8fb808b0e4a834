#!/usr/bin/env bash
# Compares two revisions of memplan side by side on this machine, for a change
# whose effect is smaller than the machine's noise: replay and record of the
# churn, mt-churn and sqlite3 workloads of scripts/bench.sh, in alternating runs (glibc
# alone, OLD, NEW) so that all three see the same load. Each revision replays the
# plan it recorded itself. Prints, per cell, the least and the median CPU seconds
# (user + system) as a Markdown table.
#
#   scripts/bench-compare.sh OLD NEW     e.g. scripts/bench-compare.sh 45ecd6d HEAD
#   BENCH_COMPARE_RUNS=N                 runs per cell (default 8)
set -euo pipefail

die() {
	echo "bench-compare: $*" >&2
	exit 1
}

[ $# -eq 2 ] || {
	echo "usage: scripts/bench-compare.sh OLD NEW" >&2
	exit 2
}
root=$(cd "$(dirname "$0")/.." && pwd)
runs=${BENCH_COMPARE_RUNS:-8}
case $runs in
'' | *[!0-9]* | 0) die "BENCH_COMPARE_RUNS must be a whole number >= 1 (got '$runs')" ;;
esac
"$root/scripts/install-deps.sh"

work=$(mktemp -d "${TMPDIR:-/tmp}/memplan-compare.XXXXXX")
cleanup() {
	for side in old new; do
		git -C "$root" worktree remove --force "$work/$side-src" 2>/dev/null || true
	done
	rm -rf "$work"
}
trap cleanup EXIT

# Each revision in a worktree of its own, built for release.
revs=("$1" "$2")
sides=(old new)
for i in 0 1; do
	side=${sides[$i]}
	git -C "$root" rev-parse --verify --quiet "${revs[$i]}^{commit}" >/dev/null ||
		die "'${revs[$i]}' is not a revision"
	git -C "$root" worktree add --detach --force "$work/$side-src" "${revs[$i]}" >/dev/null 2>&1 ||
		die "cannot check out ${revs[$i]}"
	meson setup "$work/$side" "$work/$side-src" --buildtype=release -Dtests=true >/dev/null ||
		die "cannot configure ${revs[$i]}"
	ninja -C "$work/$side" >/dev/null || die "cannot build ${revs[$i]}"
done
lib() { echo "$work/$1/src/preload/libmemplan.so"; }

python3 "$root/scripts/bench/gen_sql.py" 200000 >"$work/workload.sql"
churn=("$work/new/tests/bench/bench-churn" 3000000)
mt_churn=("$work/new/tests/bench/bench-churn" 1000000 4)
sqlite=(sh -c "exec sqlite3 :memory: < '$work/workload.sql'")

# Runs one command under a mode ("plain", or replay/record with a revision's
# library) and appends its CPU seconds to $work/$cell.$side.
measure() {
	local cell=$1 side=$2 mode=$3
	shift 3
	if [ "$side" = plain ]; then
		/usr/bin/time -o "$work/time" -f "%U %S" "$@" >/dev/null 2>&1
	else
		local plan="$work/$cell.$side.plan"
		[ "$mode" = record ] && plan="$work/$cell.$side.scratch.plan"
		/usr/bin/time -o "$work/time" -f "%U %S" env MEMPLAN_MODE="$mode" \
			MEMPLAN_PLAN="$plan" LD_PRELOAD="$(lib "$side")" "$@" >/dev/null 2>&1
		rm -f "$work/$cell.$side.scratch.plan"
	fi || die "$cell: $side run failed"
	awk '{ print $1 + $2 }' "$work/time" >>"$work/$cell.$side"
}

# Least and median of a cell's figures, "least / median".
summary() {
	sort -n "$1" | awk '{ a[NR] = $1 } END { printf "%.2f / %.2f", a[1], a[int((NR + 1) / 2)] }'
}

echo "| $runs alternating runs, least / median CPU s | glibc alone | ${revs[0]} | ${revs[1]} |"
echo "|---|---|---|---|"
for workload in churn mt-churn sqlite3; do
	case $workload in
	churn) cmd=("${churn[@]}") ;;
	mt-churn) cmd=("${mt_churn[@]}") ;;
	*) cmd=("${sqlite[@]}") ;;
	esac
	for mode in replay record; do
		cell=$workload-$mode
		# Each revision replays its own plan, recorded once before the timed runs.
		[ $mode = replay ] && for side in old new; do
			env MEMPLAN_MODE=record MEMPLAN_PLAN="$work/$cell.$side.plan" \
				LD_PRELOAD="$(lib $side)" "${cmd[@]}" >/dev/null 2>&1 ||
				die "$cell: recording with $side failed"
		done
		for ((r = 0; r < runs; r++)); do
			for side in plain old new; do
				measure "$cell" $side $mode "${cmd[@]}"
			done
		done
		echo "| $workload $mode | $(summary "$work/$cell.plain") | $(summary "$work/$cell.old") | $(summary "$work/$cell.new") |"
	done
done
