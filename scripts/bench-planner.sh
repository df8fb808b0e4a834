#!/bin/sh
# Benchmarks the planner through `memplan plan --csv` and writes docs/planner.md:
# the MiniMalloc challenging suite (A-K) and the idealloc instances with a time
# limit (default 30 s) next to the quick heuristic alone (--time-limit 0), and
# synthetic traces of 10^5, 10^6 and 10^7 blocks for scale.
#
#   scripts/bench-planner.sh            # builds build/ if needed
#   MEMPLAN=path/to/memplan MEMPLAN_DSA_DIR=dir TIME_LIMIT=30 scripts/bench-planner.sh
#
# Environment: MEMPLAN (the CLI), MEMPLAN_DSA_DIR (default /work/shared/bench/dsa),
# TIME_LIMIT (seconds, default 30), BENCH_TMP (where the synthetic CSV files go,
# default /tmp; the 10^7 file is about 280 MB), OUT (default docs/planner.md).
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
dsa=${MEMPLAN_DSA_DIR:-/work/shared/bench/dsa}
limit=${TIME_LIMIT:-30}
tmp=${BENCH_TMP:-/tmp}
out=${OUT:-docs/planner.md}

if [ -z "${MEMPLAN:-}" ]; then
	MEMPLAN=build/tools/memplan
	if [ ! -x "$MEMPLAN" ]; then
		[ -d build ] || meson setup build
		meson compile -C build
	fi
fi
[ -x "$MEMPLAN" ] || { echo "bench-planner: no memplan at $MEMPLAN" >&2; exit 1; }
[ -f "$dsa/A.1048576.csv" ] || { echo "bench-planner: no instances in $dsa" >&2; exit 1; }

work=$(mktemp -d "$tmp/bench-planner.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Best known heights (bench/dsa/README.md); idealloc instances have none published.
best_known() {
	case "$1" in
	C.1048576.csv) echo 1039360 ;;
	D.1048576.csv) echo 1031168 ;;
	J.1048576.csv) echo 1041408 ;;
	[ABEFGHIK].1048576.csv) echo 1048576 ;;
	*) echo - ;;
	esac
}

# run FILE LIMIT -> "arena lb seconds" (the planner's own time), from stderr
run() {
	"$MEMPLAN" plan --csv "$1" -o "$work/out.csv" --time-limit "$2" 2>"$work/err" ||
		{ cat "$work/err" >&2; exit 1; }
	sed -n 's/.*blocks, arena \([0-9]*\) bytes, lower bound \([0-9]*\) bytes, ratio [0-9.]*, \([0-9.]*\) s.*/\1 \2 \3/p' \
		"$work/err"
}

table_rows() {
	for f in "$@"; do
		name=$(basename "$f")
		blocks=$(($(wc -l <"$f") - 1))
		set -- $(run "$f" 0)
		greedy=$1
		set -- $(run "$f" "$limit")
		arena=$1 lb=$2 secs=$3
		best=$(best_known "$name")
		awk -v n="$name" -v b="$blocks" -v lb="$lb" -v best="$best" -v a="$arena" \
			-v s="$secs" -v g="$greedy" 'BEGIN {
			gap = best == "-" ? "-" : sprintf("%+.2f%%", 100 * (a - best) / best)
			printf "| %s | %d | %.0f | %s | %.0f | %.4f | %s | %.1f | %.0f (%.4f) |\n",
				n, b, lb, best, a, a / lb, gap, s, g, g / lb
		}'
	done
}

gen="$work/gen"
cat >"$work/gen.c" <<'EOF'
/* Synthetic allocation trace: one allocation per tick, sizes log-uniform from
 * 16 B to 128 KiB, lifetimes mostly short (1-64 ticks), 1/16 medium
 * (100-1100) and 1/16 long (1000-101000). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
	unsigned long long n = strtoull(argv[1], 0, 10), s = 88172645463325252ull;
	printf("id,lower,upper,size\n");
	for (unsigned long long i = 0; i < n; i++) {
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		uint64_t r = s, size = (uint64_t)16 << (r % 13), life;
		size += (r >> 8) % size;
		switch ((r >> 24) % 16) {
		case 0: life = 1000 + (r >> 32) % 100000; break;
		case 1: life = 100 + (r >> 32) % 1000; break;
		default: life = 1 + (r >> 32) % 64;
		}
		printf("%llu,%llu,%llu,%llu\n", i, i, i + life, (unsigned long long)size);
	}
	return 0;
}
EOF
cc -O2 -o "$gen" "$work/gen.c"

{
	echo "| instance | blocks | LB | best known | ours | ours / LB | gap to best known | time (s) | greedy, --time-limit 0 (/ LB) |"
	echo "|---|---|---|---|---|---|---|---|---|"
	table_rows "$dsa"/[A-K].1048576.csv
} >"$work/ak.md"
{
	echo "| instance | blocks | LB | best known | ours | ours / LB | gap to best known | time (s) | greedy, --time-limit 0 (/ LB) |"
	echo "|---|---|---|---|---|---|---|---|---|"
	table_rows "$dsa"/extra-idealloc/*.csv
} >"$work/ideal.md"
{
	echo "| blocks | CSV size | LB | arena (--time-limit 0) | arena / LB | planner time (s) | whole command, wall (s) | peak RSS (MB) |"
	echo "|---|---|---|---|---|---|---|---|"
	for n in 100000 1000000 10000000; do
		csv="$work/syn.$n.csv"
		"$gen" "$n" >"$csv"
		size=$(du -m "$csv" | cut -f1)
		/usr/bin/time -f "%e %M" -o "$work/time" "$MEMPLAN" plan --csv "$csv" \
			-o "$work/out.csv" --time-limit 0 2>"$work/err"
		set -- $(sed -n 's/.*blocks, arena \([0-9]*\) bytes, lower bound \([0-9]*\) bytes, ratio [0-9.]*, \([0-9.]*\) s.*/\1 \2 \3/p' "$work/err") \
			$(tail -n 1 "$work/time")
		awk -v n="$n" -v mb="$size" -v a="$1" -v lb="$2" -v s="$3" -v w="$4" -v rss="$5" \
			'BEGIN { printf "| %d | %d MB | %.0f | %.0f | %.4f | %.2f | %.1f | %d |\n",
				n, mb, lb, a, a / lb, s, w, rss / 1024 }'
		rm -f "$csv" "$work/out.csv"
	done
} >"$work/syn.md"

{
	sed -n '1,/^<!-- results -->$/p' "$out" 2>/dev/null || true
} >"$work/head.md"
if [ ! -s "$work/head.md" ]; then
	echo "<!-- results -->" >"$work/head.md"
fi
{
	cat "$work/head.md"
	echo
	echo "Measured $(date -u +%Y-%m-%d) on $(nproc) CPUs ($(uname -m)), commit" \
		"$(git rev-parse --short HEAD 2>/dev/null || echo unknown), with"
	echo "\`TIME_LIMIT=$limit scripts/bench-planner.sh\`. Times are the planner's own (as printed"
	echo "by \`memplan plan\`), wall clock, on a machine that other jobs may share."
	echo
	echo "### MiniMalloc challenging suite (time limit $limit s)"
	echo
	cat "$work/ak.md"
	echo
	echo "### idealloc instances (time limit $limit s)"
	echo
	cat "$work/ideal.md"
	echo
	echo "### Synthetic traces (quick heuristic only, --time-limit 0)"
	echo
	cat "$work/syn.md"
} >"$work/doc.md"
mkdir -p "$(dirname "$out")"
mv "$work/doc.md" "$out"
echo "bench-planner: wrote $out"
