#!/usr/bin/env bash
# Counts the instructions and the data cache misses each allocator spends per
# malloc, calloc, realloc and free on the allocator-bound churn (bench-churn with
# CHURN_TOUCH=8, which writes only 8 bytes of each block), for glibc, jemalloc,
# mimalloc, tcmalloc and memplan replay. callgrind counts instructions, not time,
# so the figures repeat from run to run even on a loaded machine. Its misses are
# those of a simulated cache (cache_sim below: a first level and a last level the
# sizes of this kind of machine's per-core L1 and L2, no prefetcher), since a
# virtual machine often has no hardware counters for perf; they leave out page
# faults and what a prefetcher hides.
#
#   [BENCH_REV=REV] scripts/bench/instructions.sh [--ops N] [--write [FILE]]
#
#   --ops N         churn operations (default 200000)
#   --write [FILE]  also put the table into FILE (default docs/benchmarks.md) as its
#                   "Instructions per call" section, replacing the one there;
#                   scripts/bench.sh keeps that section when it rewrites the file
#   BENCH_BUILD_DIR   release build directory (default build-bench, made if missing)
#   BENCH_REV=REV     measure the committed revision REV (e.g. HEAD) instead of the
#                     work tree: it is exported and built afresh in a temporary dir
#   BENCH_NO_INSTALL=1  never call apt-get; fail if something is missing
#
# Each allocator runs as
#   valgrind --tool=callgrind --trace-children=yes CACHE_SIM --callgrind-out-file=OUT \
#     env CHURN_TOUCH=8 LD_PRELOAD=ALLOCATOR.so BUILD/tests/bench/bench-churn N
# (CACHE_SIM: the options in cache_sim below.) valgrind hands the environment on to
# the program, LD_PRELOAD included (env puts it there: valgrind's own wrapper script
# then runs without it; the launcher that valgrind runs again at env's exec loads it
# too, harmlessly). The profile read is the one of bench-churn. memplan replays a
# plan recorded beforehand, without valgrind, as users record one, by
#   CHURN_TOUCH=8 BUILD/tools/memplan record -o PLAN -- BUILD/tests/bench/bench-churn N
# and replays it with MEMPLAN_MODE=replay MEMPLAN_PLAN=PLAN MEMPLAN_STATS=STATS in
# the environment given to env; STATS shows the plan was found and used.
#
# The count per call is inclusive (all the allocator did for the call), over the
# calls the churn's own functions make (main's one-off calls are left out), as
# scripts/bench/callgrind_calls.py reads them from callgrind's call graph.
#
# Then a real program whose allocator shares the caches with much else: sqlite3
# on an in-memory database (scripts/bench/gen_sql.py SQL_ROWS rows), whole-program
# instructions and data cache misses under each allocator, memplan replaying a
# plan recorded the same way. An allocator whose own tables take many cache lines
# a call shows there as misses of the program's code too, which the churn, with
# few call sites and all of them hot, does not show.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
bench_name=instructions
# shellcheck source=scripts/bench/common.sh
. "$root/scripts/bench/common.sh"

usage() {
	echo "usage: scripts/bench/instructions.sh [--ops N] [--write [FILE]]" >&2
	exit 2
}
ops=200000
touch_bytes=8
sql_rows=20000
# 48 KiB 12-way first level, 2 MiB 16-way last level, 64-byte lines: fixed, so
# that the figures do not depend on what valgrind finds on the machine (on a
# virtual machine, a last level of the host's whole L3).
cache_sim=(--cache-sim=yes --D1=49152,12,64 --LL=2097152,16,64)
write=
while [ $# -gt 0 ]; do
	case $1 in
	--ops)
		[ $# -ge 2 ] || usage
		ops=$2
		shift 2
		;;
	--write)
		write=$root/docs/benchmarks.md
		shift
		if [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; then
			write=$(realpath -m "$1")
			shift
		fi
		;;
	*) usage ;;
	esac
done
case $ops in
'' | *[!0-9]* | 0) die "--ops takes a whole number >= 1 (got '$ops')" ;;
esac

ensure_packages valgrind "${allocator_packages[@]}" python3 meson ninja-build sqlite3
find_allocators

work=$(mktemp -d /tmp/memplan-instructions.XXXXXX)
trap 'rm -rf "$work"' EXIT
src=$root
build=${BENCH_BUILD_DIR:-$root/build-bench}
rev_text=
if [ -n "${BENCH_REV:-}" ]; then
	src="$work/src"
	build="$work/build"
	export_rev "$BENCH_REV" "$src"
fi
# Only what is measured: the rest of the tree need not build.
build_release "$src" "$build" src/preload/libmemplan.so src/preload/libmemplan-record.so \
	tests/bench/bench-churn tools/memplan
lib="$build/src/preload/libmemplan.so"
churn="$build/tests/bench/bench-churn"
if [ ! -x "$churn" ] || [ ! -f "$lib" ]; then
	die "$churn or $lib was not built"
fi
cd "$work"

say "recording the plan (without valgrind)"
CHURN_TOUCH=$touch_bytes "$build/tools/memplan" record -o "$work/churn.plan" -- \
	"$churn" "$ops" >"$work/record.out" || die "recording failed"
CHURN_TOUCH=$touch_bytes "$churn" "$ops" >"$work/glibc.ref" || die "bench-churn failed"
cmp -s "$work/record.out" "$work/glibc.ref" ||
	die "the recording printed something else than glibc's run"

allocators=(glibc jemalloc mimalloc tcmalloc memplan)
# allocator_env ALLOC PLAN STATS: the environment that runs a program on ALLOC,
# into aenv.
allocator_env() {
	case $1 in
	glibc) aenv=() ;;
	jemalloc) aenv=(LD_PRELOAD="$jemalloc_so") ;;
	mimalloc) aenv=(LD_PRELOAD="$mimalloc_so") ;;
	tcmalloc) aenv=(LD_PRELOAD="$tcmalloc_so") ;;
	memplan) aenv=(MEMPLAN_MODE=replay MEMPLAN_PLAN="$2" MEMPLAN_STATS="$3" LD_PRELOAD="$lib") ;;
	esac
}
# profile TAG ALLOC REF CMD...: runs CMD (stdin as given) under callgrind with
# ALLOC's environment (aenv), checks that it printed REF, and puts into
# profile_arg "LABEL=PROFILE", the profile of the process that ran CMD's program.
profile() {
	local tag=$1 alloc=$2 ref=$3 outs
	shift 3
	say "callgrind: $tag on $alloc"
	valgrind --tool=callgrind --trace-children=yes "${cache_sim[@]}" \
		--callgrind-out-file="$work/$tag.$alloc.%p" env "${aenv[@]}" "$@" \
		>"$work/$tag-$alloc.out" 2>"$work/$tag-$alloc.valgrind" ||
		die "$tag on $alloc under callgrind failed: $(tail -n 5 "$work/$tag-$alloc.valgrind")"
	cmp -s "$work/$tag-$alloc.out" "$ref" ||
		die "$tag on $alloc printed something else than its run without valgrind"
	mapfile -t outs < <(grep -l "^cmd: *$1" "$work/$tag.$alloc".*)
	[ ${#outs[@]} -eq 1 ] || die "expected one callgrind profile of $tag on $alloc"
	profile_arg="$([ "$alloc" = memplan ] && echo "memplan replay" || echo "$alloc")=${outs[0]}"
}
profiles=()
for alloc in "${allocators[@]}"; do
	allocator_env "$alloc" "$work/churn.plan" "$work/stats.jsonl"
	aenv=(CHURN_TOUCH=$touch_bytes "${aenv[@]}")
	profile churn "$alloc" "$work/glibc.ref" "$churn" "$ops"
	profiles+=("$profile_arg")
done

# served STATS: what the replay's main process (its statistics line) served; fails
# if it did not use the plan.
served() {
	python3 - "$1" <<'EOF'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
m = max(lines, key=lambda o: o.get("allocs", 0))
if m.get("match", "none") == "none":
    sys.exit("memplan replay under valgrind did not find the program in the plan")
n = max(m["allocs"], 1)
print("{:.2f}% of its {:,} allocation calls from the arena ({:.2f}% by the steady state), "
      "image matched {}".format(100.0 * m["hits"] / n, m["allocs"],
                                100.0 * m.get("steady_hits", 0) / n, m.get("match", "?")))
EOF
}
served=$(served "$work/stats.jsonl") || die "the replay's statistics say the plan was not used"
say "memplan replay served $served"

sqlite_bin=$(readlink -f "$(command -v sqlite3)") || die "sqlite3 is missing"
python3 "$root/scripts/bench/gen_sql.py" "$sql_rows" >"$work/rows.sql" || die "cannot write the SQL"
say "recording sqlite3's plan (without valgrind)"
"$build/tools/memplan" record -o "$work/sqlite3.plan" -- "$sqlite_bin" :memory: \
	<"$work/rows.sql" >"$work/sqlite3-record.out" || die "recording sqlite3 failed"
"$sqlite_bin" :memory: <"$work/rows.sql" >"$work/sqlite3.ref" || die "sqlite3 failed"
cmp -s "$work/sqlite3-record.out" "$work/sqlite3.ref" ||
	die "sqlite3's recording printed something else than its plain run"
programs=()
for alloc in "${allocators[@]}"; do
	allocator_env "$alloc" "$work/sqlite3.plan" "$work/sqlite3-stats.jsonl"
	profile sqlite3 "$alloc" "$work/sqlite3.ref" "$sqlite_bin" :memory: <"$work/rows.sql"
	programs+=(--program "$profile_arg")
done
sqlite_served=$(served "$work/sqlite3-stats.jsonl") ||
	die "sqlite3's replay statistics say the plan was not used"
say "memplan replay of sqlite3 served $sqlite_served"

if [ -n "$rev_text" ]; then
	commit=$rev_text
else
	commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
	git -C "$root" diff --quiet HEAD -- src tests/bench 2>/dev/null ||
		commit="$commit (with uncommitted changes)"
fi
args=(--exe bench-churn
	--note "Written by \`${BENCH_REV:+BENCH_REV=$BENCH_REV }scripts/bench/instructions.sh \
--write\` (see its head); \
rerun it to refresh this section. Instructions counted by callgrind (valgrind \
$(dpkg-query -W -f='${Version}' valgrind)) on \`CHURN_TOUCH=$touch_bytes \
BUILD/tests/bench/bench-churn $ops\`, memplan $commit (release build), on \
$(date -u '+%Y-%m-%d'). Each figure is the inclusive count per call of the calls \
the churn itself makes, whatever the allocator does inside (memplan replay: \
finding the call site and its occurrence, the arena's check and claim; the others: \
their fast and slow paths). Counts are exact and repeat from run to run, but say \
nothing of page faults, and of cache misses only what the simulation below finds: \
the wall-time tables above show both. Caches simulated: ${cache_sim[*]:1}."
	--note "memplan replay served $served."
	--program-note "Whole programs: \`sqlite3 :memory:\` running \
\`scripts/bench/gen_sql.py $sql_rows\` (sqlite3 $(dpkg-query -W -f='${Version}' sqlite3)), \
the same simulated caches; memplan replay served $sqlite_served. Its misses count \
the program's own as well as the allocator's: an allocator that takes more cache \
lines a call leaves fewer to the program. They move by a few percent with the \
process's layout (the size of its environment), the instructions by none.")
[ -n "$write" ] && args+=(--write "$write")
python3 "$root/scripts/bench/callgrind_calls.py" "${args[@]}" "${programs[@]}" "${profiles[@]}"
[ -n "$write" ] && say "wrote the section into $write"
exit 0
