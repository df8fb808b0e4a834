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
# memplan replays each workload with a plan recorded once, before the timed runs.
# For most workloads the recorded run is the replayed one; the workloads named
# *-longer and *-args replay a longer run, on another input or with other arguments,
# than the one recorded (a plan outlives its recording: docs/steady-state.md).
#
# Instructions per malloc and free, counted with callgrind rather than timed, come
# from scripts/bench/instructions.sh, run separately.
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

bench_name=bench
# shellcheck source=scripts/bench/common.sh
. "$root/scripts/bench/common.sh"

case "$reps" in
'' | *[!0-9]* | 0) die "BENCH_REPS must be a whole number >= 1 (got '$reps')" ;;
esac
# Commands are kept as strings of shell words below, their paths unquoted.
case "$root$build" in
*' '*) die "paths with spaces are not supported: $root, $build" ;;
esac

# --- dependencies -----------------------------------------------------------------
ensure_packages "${allocator_packages[@]}" heaptrack sqlite3 python3 jq perl meson ninja-build
find_allocators
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
jq_bin=$(readlink -f /usr/bin/jq)
[ -x "$jq_bin" ] || die "/usr/bin/jq is missing"
perl_bin=$(readlink -f /usr/bin/perl)
[ -x "$perl_bin" ] || die "/usr/bin/perl is missing"

# --- build ------------------------------------------------------------------------
work=$(mktemp -d /tmp/memplan-bench.XXXXXX)
cleanup() {
	if [ -n "${BENCH_KEEP_DIR:-}" ] && [ -f "$work/meta.env" ]; then
		# The plans themselves are hundreds of MiB; their summaries are kept.
		mkdir -p "$BENCH_KEEP_DIR" &&
			rm -rf "$work/src" "$work/build" "$work/in" "$work"/plans/*.plan &&
			cp -r "$work"/. "$BENCH_KEEP_DIR"/ &&
			say "raw figures kept in $BENCH_KEEP_DIR"
	fi
	rm -rf "$work"
}
trap cleanup EXIT

src=$root
rev_text=
if [ -n "${BENCH_REV:-}" ]; then
	src="$work/src"
	build="$work/build"
	export_rev "$BENCH_REV" "$src"
fi
build_release "$src" "$build"
lib="$build/src/preload/libmemplan.so"
cli="$build/tools/memplan"
run="$build/tests/bench/bench-run"
for f in "$lib" "$cli" "$run" "$build/tests/bench/bench-churn" "$build/tests/bench/bench-layers"; do
	[ -x "$f" ] || [ -f "$f" ] || die "$f was not built"
done

# --- workloads --------------------------------------------------------------------
# A workload is the command run under every allocator (wl_cmd, its stdin wl_in, its
# extra environment wl_env) and the command whose recording is the plan memplan
# replays it with (wl_rec_cmd, wl_rec_in): the same run unless set. A workload whose
# recording differs stands for a plan recorded once, on a short input or with other
# arguments, that serves longer runs (docs/steady-state.md).
mkdir -p "$work/plans" "$work/stats" "$work/out" "$work/prof" "$work/in"

short_lines=1000 long_lines=20000
py_rec_n=2000 py_n=40000
if [ "$quick" = 1 ]; then
	churn_ops=300000 mt_ops=100000 layer_iters=4 sql_rows=20000 json_records=6000
	args_rec_ops=100000 args_ops=2000000 loop_rounds=20
else
	churn_ops=3000000 mt_ops=1000000 layer_iters=20 sql_rows=200000 json_records=60000
	args_rec_ops=1000000 args_ops=20000000 loop_rounds=120
fi
gen() { # gen FILE GENERATOR ARGS...: writes an input from a fixed seed
	local file=$1 script=$2
	shift 2
	"$python_bin" "$root/scripts/bench/$script" "$@" >"$work/in/$file" ||
		die "cannot write the input $file"
}
gen workload.sql gen_sql.py "$sql_rows"
# The short inputs come from other seeds than the long ones: neither is a prefix of
# the other.
gen stream-$short_lines.sql gen_sql.py --stream --seed 1 $short_lines
gen stream-$long_lines.sql gen_sql.py --stream --seed 2 $long_lines
gen lines-$short_lines.jsonl gen_lines.py json $short_lines --seed 1
gen lines-$long_lines.jsonl gen_lines.py json $long_lines --seed 2
gen text-$short_lines.txt gen_lines.py text $short_lines --seed 1
gen text-$long_lines.txt gen_lines.py text $long_lines --seed 2

workloads=(churn churn-touch churn-args layers mt-churn sqlite3 sqlite3-longer python3-json
	python3-args jq-longer perl-longer shell-loop)
declare -A wl_cmd wl_in wl_env wl_rec_cmd wl_rec_in wl_what
churn="$build/tests/bench/bench-churn"
wl_cmd[churn]="$churn $churn_ops"
wl_what[churn]="small-object churn: $churn_ops operations, 16-512 B, six call sites, mixed lifetimes, 1 thread, each block written in full"
wl_cmd[churn-touch]="$churn $churn_ops"
wl_env[churn-touch]="CHURN_TOUCH=8"
wl_what[churn-touch]="the churn workload writing and reading only the first 8 bytes of each block, so that the allocator is most of the cost"
wl_cmd[churn-args]="$churn $args_ops"
wl_rec_cmd[churn-args]="$churn $args_rec_ops"
wl_what[churn-args]="the churn workload, $args_ops operations, replayed with the plan of a run of $args_rec_ops"
wl_cmd[layers]="$build/tests/bench/bench-layers $layer_iters"
wl_what[layers]="big-buffer layers: $layer_iters iterations of 12 layers, 1-16 MiB outputs and workspaces, written in full"
wl_cmd[mt-churn]="$churn $mt_ops 4"
wl_what[mt-churn]="the churn workload in 4 threads, $mt_ops operations each"
sqlite_version=$(dpkg-query -W -f='${Version}' sqlite3)
wl_cmd[sqlite3]="$sqlite_bin :memory:"
wl_in[sqlite3]=workload.sql
wl_what[sqlite3]="sqlite3 $sqlite_version on an in-memory database: $sql_rows inserts in one transaction, an index, 4 group-by queries"
wl_cmd[sqlite3-longer]="$sqlite_bin :memory:"
wl_in[sqlite3-longer]=stream-$long_lines.sql
wl_rec_in[sqlite3-longer]=stream-$short_lines.sql
wl_what[sqlite3-longer]="sqlite3 $sqlite_version on an in-memory database fed a stream: $long_lines inserts of random text, after every 50 a group-by query and a delete of all but the newest 500 rows; recorded on a stream of $short_lines (another seed)"
python_version=$("$python_bin" -c 'import platform; print(platform.python_version())')
wl_cmd[python3-json]="$python_bin $root/scripts/bench/json_roundtrip.py $json_records"
wl_what[python3-json]="CPython $python_version: json.dumps, json.loads, json.dumps of $json_records nested records"
wl_cmd[python3-args]="$python_bin $root/scripts/bench/py_args.py $py_n"
wl_rec_cmd[python3-args]="$python_bin $root/scripts/bench/py_args.py $py_rec_n"
wl_what[python3-args]="CPython $python_version: json.dumps of $py_n dicts, each with a string of i % 700 characters and a list of range(i % 300); recorded with N=$py_rec_n (other arguments)"
wl_cmd[jq-longer]="$jq_bin -c '{id, n: (.tags|length), name}'"
wl_in[jq-longer]=lines-$long_lines.jsonl
wl_rec_in[jq-longer]=lines-$short_lines.jsonl
wl_what[jq-longer]="jq $(dpkg-query -W -f='${Version}' jq) on $long_lines JSON lines (an id, a name of 1-8 words, 0-12 tags, a float); recorded on $short_lines lines (another seed)"
wl_cmd[perl-longer]="$perl_bin -ne 'my @w = split; \$c{\$w[0]}++; \$t += length; END { print scalar(keys %c), \" \$t\\n\" }'"
wl_in[perl-longer]=text-$long_lines.txt
wl_rec_in[perl-longer]=text-$short_lines.txt
wl_what[perl-longer]="perl $(dpkg-query -W -f='${Version}' perl): counts first words and characters of $long_lines lines of 1-16 words; recorded on $short_lines lines (another seed)"
wl_cmd[shell-loop]="/bin/sh $root/scripts/bench/shell_loop.sh $loop_rounds $work/in/text-$long_lines.txt"
wl_what[shell-loop]="a shell script that runs many short programs, as build and CI scripts do: $loop_rounds rounds of head, sort, uniq -c, sort -rn and head over a text file ($((5 * loop_rounds + 1)) processes, each replayed from its own image of the one plan)"
for wl in "${workloads[@]}"; do
	wl_rec_cmd[$wl]=${wl_rec_cmd[$wl]:-${wl_cmd[$wl]}}
	wl_rec_in[$wl]=${wl_rec_in[$wl]:-${wl_in[$wl]:-}}
done

# recorded_elsewhere WL: true if WL replays another run than the one it recorded.
recorded_elsewhere() {
	[ "${wl_rec_cmd[$1]}" != "${wl_cmd[$1]}" ] || [ "${wl_rec_in[$1]}" != "${wl_in[$1]:-}" ]
}

# workload_cmd WL WHICH sets w_cmd (the words of the workload's command: WHICH is
# run for the one replayed, rec for the one recorded), w_env (its environment) and
# w_in (its stdin). Commands are kept as shell words, quoted as on a command line.
w_cmd=() w_env=() w_in=
workload_cmd() {
	local wl=$1
	if [ "$2" = rec ]; then
		eval "w_cmd=(${wl_rec_cmd[$wl]})"
		w_in=${wl_rec_in[$wl]}
	else
		eval "w_cmd=(${wl_cmd[$wl]})"
		w_in=${wl_in[$wl]:-}
	fi
	w_in=${w_in:+$work/in/$w_in}
	w_in=${w_in:-/dev/null}
	read -ra w_env <<<"${wl_env[$wl]:-}"
}

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

# run_measured PHASE WORKLOAD TOOL REP OUTFILE ENV... runs the workload under
# bench-run with the given environment (and, after it, a profiler's command) and
# appends one row to the results. The allocator phase
# runs the replayed command, the profiler phase the recorded one; the output is
# compared with glibc's output of the same command.
run_measured() {
	local phase=$1 wl=$2 tool=$3 rep=$4 outfile=$5
	shift 5
	local which=run ref="$work/out/$wl.ref"
	if [ "$phase" = profiler ]; then
		which=rec ref="$work/out/$wl.rec.ref"
	fi
	local timing="$work/timing.txt"
	rm -f "$timing"
	local status=0
	workload_cmd "$wl" "$which"
	"$run" "$timing" env "${common_env[@]}" "${w_env[@]}" "$@" "${w_cmd[@]}" <"$w_in" \
		>"$outfile" 2>"$work/stderr.txt" || status=$?
	local line
	line=$(tail -n 1 "$timing" 2>/dev/null || echo "nan 0 $status nan")
	local same=1
	if ! cmp -s "$outfile" "$ref"; then
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

# Reference outputs from glibc, of the replayed command and of the recorded one
# (this also warms the page cache for the inputs).
for wl in "${workloads[@]}"; do
	say "warm-up and reference output: $wl"
	for which in run rec; do
		ref="$work/out/$wl.ref"
		[ "$which" = rec ] && ref="$work/out/$wl.rec.ref"
		workload_cmd "$wl" "$which"
		env "${common_env[@]}" "${w_env[@]}" "${w_cmd[@]}" <"$w_in" >"$ref" ||
			die "$wl fails under glibc"
	done
done

# record WL WHICH PLAN records the workload's command into PLAN and keeps the plan's
# size and `memplan show --json` beside it; its output must be glibc's.
record() {
	local wl=$1 which=$2 plan=$3 ref="$work/out/$1.ref"
	[ "$which" = rec ] && ref="$work/out/$1.rec.ref"
	workload_cmd "$wl" "$which"
	env "${common_env[@]}" "${w_env[@]}" "$cli" record -o "$plan" -- "${w_cmd[@]}" \
		<"$w_in" >"$work/out/record.out" || die "recording $wl failed"
	cmp -s "$work/out/record.out" "$ref" ||
		die "recording $wl printed something else than glibc did"
	[ -s "$plan" ] || die "recording $wl wrote no plan"
	"$cli" show --json "$plan" >"${plan%.plan}.json" ||
		die "memplan show failed on the plan of $wl"
	stat -c %s "$plan" >"${plan%.plan}.size"
}

# One recording per workload, made before any timing, serves every replay run. A
# workload that replays another run than the recorded one also has that run recorded
# (never replayed), to show how the plan's size goes with the run's length.
for wl in "${workloads[@]}"; do
	say "recording the plan for $wl"
	record "$wl" rec "$work/plans/$wl.plan"
	if recorded_elsewhere "$wl"; then
		say "recording the replayed run of $wl, for its plan's size"
		record "$wl" run "$work/plans/$wl.replayed.plan"
		rm -f "$work/plans/$wl.replayed.plan"
	fi
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

# Profilers: `memplan record`, as users run it (the recording, then re-planning and
# symbolising the plan file), against heaptrack (which also interprets and
# compresses its trace), and the command alone (what no profiler can beat), in
# turn, all on the workload's recorded command. Not on shell-loop: heaptrack follows
# only a command's first process (the shell), memplan all of them.
for ((rep = 1; rep <= reps; rep++)); do
	for wl in "${workloads[@]}"; do
		[ "$wl" = shell-loop ] && continue
		say "profilers: repetition $rep/$reps, $wl"
		for ((k = 0; k < 3; k++)); do
			turn=$(((k + rep) % 3))
			if [ $turn -eq 2 ]; then
				run_measured profiler "$wl" plain "$rep" "$work/prof/out"
			elif [ $turn -eq 1 ]; then
				run_measured profiler "$wl" "memplan record" "$rep" "$work/prof/out" \
					"$cli" record -o "$work/prof/$wl.plan" --
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
# command_text WL WHICH: the command as the report shows it, with BUILD for the build
# directory and paths relative to the source tree.
command_text() {
	local text=${wl_cmd[$1]} in=${wl_in[$1]:-}
	if [ "$2" = rec ]; then
		text=${wl_rec_cmd[$1]} in=${wl_rec_in[$1]}
	fi
	text=${text//$build/BUILD}
	text=${text//$root\//}
	text=${text//$work\/in\//}
	echo "${wl_env[$1]:+${wl_env[$1]} }$text${in:+ < $in}"
}

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
		echo "cmd.$wl=$(command_text "$wl" run)"
		if recorded_elsewhere "$wl"; then
			echo "rec.$wl=$(command_text "$wl" rec)"
		fi
		echo "what.$wl=${wl_what[$wl]}"
	done
} >"$meta"

mkdir -p "$out_dir"
python3 "$root/scripts/bench/report.py" --work "$work" --meta "$meta" \
	--markdown "$out_dir/benchmarks.md" --svg "$out_dir/benchmarks.svg" ||
	die "writing the report failed"
say "wrote $out_dir/benchmarks.md and $out_dir/benchmarks.svg (timed part: ${elapsed}s)"
