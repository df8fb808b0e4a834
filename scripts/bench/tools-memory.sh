#!/usr/bin/env bash
# How much memory memplan's tools take on a recording of about ten million small
# allocations: the recorded program's peak resident set (the raw form,
# MEMPLAN_MODE=record) against its plain run, which is what the recording adds;
# the peak of `memplan record` as a whole, which after the run names the plan's
# frames (libdw reading debug information); and the peak resident set and time
# of `memplan show`, `memplan show --json` and `memplan plan` on the plan.
# Two programs: bench-churn (six call sites, one of them a table that fills for
# the whole run) and the fault suite's churn (one site whose 64 live blocks are
# replaced at random). Peak resident sets from GNU time's %M.
#
#   scripts/bench/tools-memory.sh [--write [FILE]]
#
#   --write [FILE]  also put the table into FILE (default docs/benchmarks.md) as its
#                   "Memory of the tools" section, replacing the one there
#   BENCH_BUILD_DIR   release build directory (default build-bench, made if missing)
#   BENCH_NO_INSTALL=1  never call apt-get; fail if something is missing
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
bench_name=tools-memory
# shellcheck source=scripts/bench/common.sh
. "$root/scripts/bench/common.sh"

write=
while [ $# -gt 0 ]; do
	case $1 in
	--write)
		write=$root/docs/benchmarks.md
		shift
		if [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; then
			write=$(realpath -m "$1")
			shift
		fi
		;;
	*)
		echo "usage: scripts/bench/tools-memory.sh [--write [FILE]]" >&2
		exit 2
		;;
	esac
done

ensure_packages time python3 meson ninja-build
build=${BENCH_BUILD_DIR:-$root/build-bench}
build_release "$root" "$build" tools/memplan src/preload/libmemplan.so \
	tests/bench/bench-churn tests/faults/churn
memplan=$build/tools/memplan
work=$(mktemp -d /tmp/memplan-tools-memory.XXXXXX)
trap 'rm -rf "$work"' EXIT

# measure NAME CMD...: CMD's peak resident set (KiB) and wall time, into
# $work/NAME.rss and $work/NAME.secs; its output is dropped.
measure() {
	local name=$1
	shift
	/usr/bin/time -o "$work/$name.time" -f '%M %e' "$@" >/dev/null 2>"$work/$name.err" ||
		die "$name failed: $(tail -n 3 "$work/$name.err")"
	read -r rss secs <"$work/$name.time"
	echo "$rss" >"$work/$name.rss"
	echo "$secs" >"$work/$name.secs"
}

rows=()
for workload in bench-churn churn; do
	case $workload in
	bench-churn) cmd=("$build/tests/bench/bench-churn" 8000000) ;;
	churn) cmd=("$build/tests/faults/churn" 1250000) ;;
	esac
	say "$workload: plain, record, show, plan"
	measure "$workload-plain" "${cmd[@]}"
	measure "$workload-raw" env MEMPLAN_MODE=record MEMPLAN_PLAN="$work/$workload.raw.plan" \
		LD_PRELOAD="$build/src/preload/libmemplan.so" "${cmd[@]}"
	measure "$workload-record" "$memplan" record -o "$work/$workload.plan" -- "${cmd[@]}"
	measure "$workload-show" "$memplan" show "$work/$workload.plan"
	measure "$workload-json" "$memplan" show --json "$work/$workload.plan"
	measure "$workload-plan0" "$memplan" plan --time-limit 0 "$work/$workload.plan" \
		-o "$work/$workload.re.plan"
	measure "$workload-plan1" "$memplan" plan --time-limit 1 "$work/$workload.plan" \
		-o "$work/$workload.re.plan"
	allocs=$("$memplan" show --json "$work/$workload.plan" |
		python3 -c 'import json, sys; print(json.loads(sys.stdin.readline())["allocations"])')
	bytes=$(stat -c %s "$work/$workload.plan")
	rows+=("$workload $allocs $bytes $(for s in plain raw record show json plan0 plan1; do
		echo -n "$(cat "$work/$workload-$s.rss") $(cat "$work/$workload-$s.secs") "
	done)")
done

table=$(python3 - "${rows[@]}" <<'EOF'
import sys
print("| program | allocations | plan | the program's peak RSS, plain → recorded (added per million allocations) | memplan record | show | show --json | plan --time-limit 0 | plan --time-limit 1 |")
print("| --- | ---: | ---: | --- | --- | --- | --- | --- | --- |")
for row in sys.argv[1:]:
    f = row.split()
    name, allocs, plan_bytes = f[0], int(f[1]), int(f[2])
    v = [float(x) for x in f[3:]]
    (plain, plain_s, raw, raw_s, rec, rec_s, show, show_s, js, js_s, p0, p0_s, p1, p1_s) = v
    mib = lambda kib: "%.1f MiB" % (kib / 1024)
    per_m = (raw - plain) / 1024 / (allocs / 1e6)
    size = "%.1f MiB" % (plan_bytes / 2**20) if plan_bytes >= 2**20 else "%.1f KiB" % (plan_bytes / 1024)
    print("| %s | %s | %s | %s → %s (%.2f MiB) | %s, %.2f s | %s, %.2f s | %s, %.2f s | %s, %.2f s | %s, %.2f s |" % (
        name, "{:,}".format(allocs), size, mib(plain), mib(raw), per_m,
        mib(rec), rec_s, mib(show), show_s, mib(js), js_s, mib(p0), p0_s, mib(p1), p1_s))
EOF
)
echo "$table"
if [ -n "$write" ]; then
	note="Written by \`scripts/bench/tools-memory.sh --write\` on $(date -u '+%Y-%m-%d'), memplan \
$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown) (release build): bench-churn \
8000000 and the fault suite's \`churn 1250000\`, each about ten million allocations. Peak \
resident sets and wall times from GNU time; one run each. \`memplan record\` includes naming the \
plan's frames and re-planning it once the program has ended (\`--plan-seconds\`, 5 s by default)."
	python3 - "$write" "$note" "$table" <<'EOF'
import re, sys
path, note, table = sys.argv[1:4]
text = open(path).read()
section = "## Memory of the tools\n\n" + note + "\n\n" + table + "\n"
pattern = re.compile(r"^## Memory of the tools\n.*?(?=^## |\Z)", re.S | re.M)
text = pattern.sub(lambda m: section + "\n", text) if pattern.search(text) else text.rstrip("\n") + "\n\n" + section
open(path, "w").write(text)
EOF
	say "wrote the section into $write"
fi
