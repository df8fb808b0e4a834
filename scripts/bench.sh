#!/usr/bin/env bash
# Benchmarks memplan replay against glibc, jemalloc, mimalloc and tcmalloc, and
# memplan record against heaptrack, on the same workloads, and writes the figures to
# docs/benchmarks.md and docs/benchmarks.svg.
#
# Every repetition runs each allocator once, in turn (the starting allocator rotates
# from one repetition to the next), so that drift in the machine's state (thermal,
# page cache, other load) spreads evenly over the allocators instead of landing on
# whichever ran last. Each run's stdout is compared with the glibc run's, so an
# allocator that changes a program's result is reported, not timed.
#
# Environment:
#   BENCH_REPS=N      repetitions (default 5; 2 with BENCH_QUICK=1)
#   BENCH_QUICK=1     a fast smoke run: smaller inputs, fewer repetitions
#   BENCH_BUILD_DIR   build directory (default build-bench, reused if present)
#   BENCH_REV=REV     benchmark the committed revision REV (e.g. HEAD) instead of the
#                     work tree: it is exported and built afresh in a temporary dir
#   BENCH_OUT_DIR     where benchmarks.md and benchmarks.svg go (default docs/, or
#                     build-bench-quick/ with BENCH_QUICK=1)
#   BENCH_NO_INSTALL=1  never call apt-get; fail if something is missing
#   BENCH_KEEP_DIR=DIR  keep the raw figures (results.tsv, stats, plan summaries) in
#                     DIR, so the report can be rewritten with scripts/bench/report.py
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
quick=${BENCH_QUICK:-0}
if [ "$quick" = 1 ]; then
	reps=${BENCH_REPS:-2}
else
	reps=${BENCH_REPS:-5}
fi
build=${BENCH_BUILD_DIR:-$root/build-bench}
# A smoke run's figures mean little, so by default they do not replace the
# published ones.
if [ "$quick" = 1 ]; then
	out_dir=${BENCH_OUT_DIR:-$root/build-bench-quick}
else
	out_dir=${BENCH_OUT_DIR:-$root/docs}
fi

die() {
	echo "bench: $*" >&2
	exit 1
}
say() {
	echo "bench: $*" >&2
}

case "$reps" in
'' | *[!0-9]* | 0) die "BENCH_REPS must be a whole number >= 1 (got '$reps')" ;;
esac
# Commands are kept as space-separated strings below.
case "$root$build" in
*' '*) die "paths with spaces are not supported: $root, $build" ;;
esac

# --- dependencies -----------------------------------------------------------------
# Debian package -> a file it must provide.
ensure_packages() {
	local -a missing=()
	local pkg
	for pkg in libjemalloc2 libmimalloc2.0 libtcmalloc-minimal4 heaptrack sqlite3 python3 \
		meson ninja-build; do
		dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' ||
			missing+=("$pkg")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	if [ "${BENCH_NO_INSTALL:-0}" = 1 ]; then
		die "missing packages: ${missing[*]} (BENCH_NO_INSTALL=1 forbids installing them)"
	fi
	local sudo=
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	say "installing ${missing[*]}"
	$sudo apt-get update -q >&2 || die "apt-get update failed"
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q "${missing[@]}" >&2 ||
		die "apt-get install ${missing[*]} failed"
}

# The one shared object of a package that matches a pattern.
package_lib() {
	local lib
	lib=$(dpkg -L "$1" | grep -E "$2" | head -n 1)
	if [ -z "$lib" ] || [ ! -f "$lib" ]; then
		die "package $1 has no file matching $2"
	fi
	echo "$lib"
}

ensure_packages
jemalloc_so=$(package_lib libjemalloc2 '/libjemalloc\.so\.2$')
mimalloc_so=$(package_lib libmimalloc2.0 '/libmimalloc\.so\.2$')
tcmalloc_so=$(package_lib libtcmalloc-minimal4 '/libtcmalloc_minimal\.so\.4$')
python_bin=$(command -v python3.11 || true)
# The Debian interpreter itself, not a wrapper script (pyenv shims run bash first,
# which would put a shell, not Python, under each allocator).
for candidate in /usr/bin/python3 "$python_bin"; do
	if [ -n "$candidate" ] && [ -x "$candidate" ]; then
		python_bin=$(readlink -f "$candidate")
		break
	fi
done
sqlite_bin=$(readlink -f /usr/bin/sqlite3)
[ -x "$sqlite_bin" ] || die "/usr/bin/sqlite3 is missing"

# --- build ------------------------------------------------------------------------
work=$(mktemp -d /tmp/memplan-bench.XXXXXX)
cleanup() {
	if [ -n "${BENCH_KEEP_DIR:-}" ] && [ -f "$work/meta.env" ]; then
		# The plans themselves are hundreds of MiB; their summaries are kept.
		mkdir -p "$BENCH_KEEP_DIR" && rm -rf "$work/src" "$work/build" "$work"/plans/*.plan &&
			cp -r "$work"/. "$BENCH_KEEP_DIR"/ &&
			say "raw figures kept in $BENCH_KEEP_DIR"
	fi
	rm -rf "$work"
}
trap cleanup EXIT

src=$root
rev_text=
if [ -n "${BENCH_REV:-}" ]; then
	rev=$(git -C "$root" rev-parse --verify "${BENCH_REV}^{commit}") ||
		die "BENCH_REV=$BENCH_REV is not a commit"
	src="$work/src"
	build="$work/build"
	mkdir -p "$src"
	git -C "$root" archive --format=tar "$rev" | tar -x -C "$src" ||
		die "cannot export $rev"
	rev_text=$(git -C "$root" rev-parse --short "$rev")
fi
if [ ! -f "$build/build.ninja" ]; then
	say "configuring $build (release)"
	meson setup "$build" "$src" --buildtype=release -Dtests=true >&2 ||
		die "meson setup failed (are the build dependencies installed?)"
fi
ninja -C "$build" >&2 || die "the build failed"
lib="$build/src/preload/libmemplan.so"
cli="$build/tools/memplan"
run="$build/tests/bench/bench-run"
for f in "$lib" "$cli" "$run" "$build/tests/bench/bench-churn" "$build/tests/bench/bench-layers"; do
	[ -x "$f" ] || [ -f "$f" ] || die "$f was not built"
done

# --- workloads --------------------------------------------------------------------
mkdir -p "$work/plans" "$work/stats" "$work/out" "$work/prof"

if [ "$quick" = 1 ]; then
	churn_ops=300000 mt_ops=100000 layer_iters=4 sql_rows=20000 json_records=6000
else
	churn_ops=3000000 mt_ops=1000000 layer_iters=20 sql_rows=200000 json_records=60000
fi
python3 "$root/scripts/bench/gen_sql.py" "$sql_rows" >"$work/workload.sql"

workloads=(churn layers mt-churn sqlite3 python3-json)
declare -A wl_cmd wl_in wl_what
wl_cmd[churn]="$build/tests/bench/bench-churn $churn_ops"
wl_what[churn]="small-object churn: $churn_ops operations, 16-512 B, six call sites, mixed lifetimes, 1 thread"
wl_cmd[layers]="$build/tests/bench/bench-layers $layer_iters"
wl_what[layers]="big-buffer layers: $layer_iters iterations of 12 layers, 1-16 MiB outputs and workspaces, written in full"
wl_cmd[mt-churn]="$build/tests/bench/bench-churn $mt_ops 4"
wl_what[mt-churn]="the churn workload in 4 threads, $mt_ops operations each"
wl_cmd[sqlite3]="$sqlite_bin :memory:"
wl_in[sqlite3]="$work/workload.sql"
wl_what[sqlite3]="sqlite3 $(dpkg-query -W -f='${Version}' sqlite3) on an in-memory database: $sql_rows inserts in one transaction, an index, 4 group-by queries"
wl_cmd[python3-json]="$python_bin $root/scripts/bench/json_roundtrip.py $json_records"
wl_what[python3-json]="CPython $("$python_bin" -c 'import platform; print(platform.python_version())'): json.dumps, json.loads, json.dumps of $json_records nested records"

allocators=(glibc jemalloc mimalloc tcmalloc memplan)
# PYTHONHASHSEED fixes CPython's string hashing, so its allocations repeat from run
# to run; it is set for every allocator alike.
common_env=(PYTHONHASHSEED=0)

# Environment that selects an allocator (and, for memplan, the plan and stats file).
allocator_env() {
	local alloc=$1 wl=$2 tag=$3
	case "$alloc" in
	glibc) ;;
	jemalloc) echo "LD_PRELOAD=$jemalloc_so" ;;
	mimalloc) echo "LD_PRELOAD=$mimalloc_so" ;;
	tcmalloc) echo "LD_PRELOAD=$tcmalloc_so" ;;
	memplan)
		echo "MEMPLAN_MODE=replay"
		echo "MEMPLAN_PLAN=$work/plans/$wl.plan"
		echo "MEMPLAN_STATS=$work/stats/$wl.$tag.jsonl"
		echo "LD_PRELOAD=$lib"
		;;
	*) die "unknown allocator $alloc" ;;
	esac
}

results="$work/results.tsv"
printf 'phase\tworkload\ttool\trep\twall_s\tmaxrss_kib\tstatus\tsame_output\tcpu_s\n' >"$results"

# run_measured PHASE WORKLOAD TOOL REP OUTFILE ENV... -- runs the workload under
# bench-run with the given environment and appends one row to the results.
run_measured() {
	local phase=$1 wl=$2 tool=$3 rep=$4 outfile=$5
	shift 5
	local -a cmd
	read -ra cmd <<<"${wl_cmd[$wl]}"
	local in=${wl_in[$wl]:-/dev/null}
	local timing="$work/timing.txt"
	rm -f "$timing"
	local status=0
	"$run" "$timing" env "${common_env[@]}" "$@" "${cmd[@]}" <"$in" >"$outfile" \
		2>"$work/stderr.txt" || status=$?
	local line
	line=$(tail -n 1 "$timing" 2>/dev/null || echo "nan 0 $status nan")
	local same=1
	if [ -f "$work/out/$wl.ref" ] && ! cmp -s "$outfile" "$work/out/$wl.ref"; then
		same=0
	fi
	if [ "$status" -ne 0 ]; then
		say "$tool on $wl exited with status $status:"
		tail -n 5 "$work/stderr.txt" >&2
	elif [ "$same" = 0 ] && [ "$phase" = allocator ]; then
		say "$tool on $wl printed something else than glibc did"
	fi
	read -r wall rss _ cpu <<<"$line"
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$phase" "$wl" "$tool" "$rep" "$wall" \
		"$rss" "$status" "$same" "$cpu" >>"$results"
}

# Reference outputs from glibc (this also warms the page cache for the inputs).
for wl in "${workloads[@]}"; do
	say "warm-up and reference output: $wl"
	read -ra cmd <<<"${wl_cmd[$wl]}"
	env "${common_env[@]}" "${cmd[@]}" <"${wl_in[$wl]:-/dev/null}" >"$work/out/$wl.ref" ||
		die "$wl fails under glibc"
done

# One recording per workload, made before any timing, serves every replay run.
record_id=$(( $(date +%s) * 1000 ))
for wl in "${workloads[@]}"; do
	say "recording the plan for $wl"
	record_id=$((record_id + 1))
	read -ra cmd <<<"${wl_cmd[$wl]}"
	env "${common_env[@]}" MEMPLAN_MODE=record MEMPLAN_PLAN="$work/plans/$wl.plan" \
		MEMPLAN_RECORD_ID=$record_id LD_PRELOAD="$lib" "${cmd[@]}" \
		<"${wl_in[$wl]:-/dev/null}" >/dev/null || die "recording $wl failed"
	[ -s "$work/plans/$wl.plan" ] || die "recording $wl wrote no plan"
	"$cli" show --json "$work/plans/$wl.plan" >"$work/plans/$wl.json" ||
		die "memplan show failed on the plan of $wl"
	stat -c %s "$work/plans/$wl.plan" >"$work/plans/$wl.size"
done

start=$(date +%s)
load_start=$(cut -d " " -f 1 /proc/loadavg)
n_alloc=${#allocators[@]}
for ((rep = 1; rep <= reps; rep++)); do
	for wl in "${workloads[@]}"; do
		say "allocators: repetition $rep/$reps, $wl"
		for ((k = 0; k < n_alloc; k++)); do
			alloc=${allocators[$(((k + rep - 1) % n_alloc))]}
			mapfile -t aenv < <(allocator_env "$alloc" "$wl" "$rep")
			run_measured allocator "$wl" "$alloc" "$rep" "$work/out/$wl.last" "${aenv[@]}"
		done
	done
done

# Profilers: a memplan recording (which also plans and writes the plan file at exit)
# against heaptrack (which also interprets and compresses its trace), alternating.
for ((rep = 1; rep <= reps; rep++)); do
	for wl in "${workloads[@]}"; do
		say "profilers: repetition $rep/$reps, $wl"
		for ((k = 0; k < 2; k++)); do
			if [ $(((k + rep) % 2)) -eq 1 ]; then
				record_id=$((record_id + 1))
				run_measured profiler "$wl" "memplan record" "$rep" "$work/prof/out" \
					MEMPLAN_MODE=record MEMPLAN_PLAN="$work/prof/$wl.plan" \
					MEMPLAN_RECORD_ID=$record_id LD_PRELOAD="$lib"
				stat -c %s "$work/prof/$wl.plan" >>"$work/prof/$wl.memplan.size" 2>/dev/null || true
				rm -f "$work/prof/$wl.plan"
			else
				# heaptrack prints its own summary to stdout; keep it out of the
				# output comparison by writing the trace into the work directory.
				run_measured profiler "$wl" heaptrack "$rep" "$work/prof/out" \
					heaptrack -o "$work/prof/ht.$wl"
				du -b "$work/prof/ht.$wl".* 2>/dev/null | awk '{print $1}' \
					>>"$work/prof/$wl.heaptrack.size" || true
				rm -f "$work/prof/ht.$wl".*
			fi
		done
	done
done
elapsed=$(($(date +%s) - start))
load_end=$(cut -d " " -f 1 /proc/loadavg)

# --- report -----------------------------------------------------------------------
meta="$work/meta.env"
{
	echo "date=$(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "nproc=$(nproc)"
	echo "cpu=$(grep -m 1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
	echo "mem=$(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)"
	echo "kernel=$(uname -r)"
	# shellcheck disable=SC1091 # a system file, read for its name only
	echo "os=$(. /etc/os-release && echo "$PRETTY_NAME")"
	echo "glibc=$(dpkg-query -W -f='${Version}' libc6)"
	echo "jemalloc=$(dpkg-query -W -f='${Version}' libjemalloc2)"
	echo "mimalloc=$(dpkg-query -W -f='${Version}' libmimalloc2.0)"
	echo "tcmalloc=$(dpkg-query -W -f='${Version}' libtcmalloc-minimal4)"
	echo "heaptrack=$(dpkg-query -W -f='${Version}' heaptrack)"
	if [ -n "$rev_text" ]; then
		echo "commit=$rev_text"
	else
		echo "commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)$(
			git -C "$root" diff --quiet HEAD 2>/dev/null || echo ' (with uncommitted changes)')"
	fi
	echo "reps=$reps"
	echo "quick=$quick"
	echo "elapsed_s=$elapsed"
	echo "load_start=$load_start"
	echo "load_end=$load_end"
	cmdline="scripts/bench.sh"
	if [ -n "${BENCH_REV:-}" ]; then
		cmdline="BENCH_REV=$BENCH_REV $cmdline"
	fi
	if [ -n "${BENCH_REPS:-}" ]; then
		cmdline="BENCH_REPS=$BENCH_REPS $cmdline"
	fi
	if [ "$quick" = 1 ]; then
		cmdline="BENCH_QUICK=1 $cmdline"
	fi
	echo "command=$cmdline"
	echo "workloads=${workloads[*]}"
	echo "allocators=${allocators[*]}"
	for wl in "${workloads[@]}"; do
		cmdtext=${wl_cmd[$wl]//$build/BUILD}
		cmdtext=${cmdtext//$root\//}
		if [ -n "${wl_in[$wl]:-}" ]; then
			cmdtext="$cmdtext < workload.sql"
		fi
		echo "cmd.$wl=$cmdtext"
		echo "what.$wl=${wl_what[$wl]}"
	done
} >"$meta"

mkdir -p "$out_dir"
python3 "$root/scripts/bench/report.py" --work "$work" --meta "$meta" \
	--markdown "$out_dir/benchmarks.md" --svg "$out_dir/benchmarks.svg" ||
	die "writing the report failed"
say "wrote $out_dir/benchmarks.md and $out_dir/benchmarks.svg (timed part: ${elapsed}s)"
