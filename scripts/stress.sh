#!/usr/bin/env bash
# Randomized differential stress of memplan: runs tests/programs/stress plain,
# under `memplan record`, and under `memplan replay` (of a run with another seed,
# which diverges from the plan, and of the recorded run itself), and checks that
# every run prints what the plain run prints and exits 0.
#
# usage: scripts/stress.sh [-v] [-n] [-k DIR] [-s SEED] [-r ROUNDS] [-t SECS] [SECONDS]
#   SECONDS    how long to go on starting rounds (default $STRESS_SECONDS, else 60;
#              a round started in time runs to its end)
#   -v         a progress line per round (the default when stdout is a terminal)
#   -n         no memplan: the plain program in place of every memplan run, to
#              check the test itself (its output must not depend on scheduling)
#   -k DIR     keep the files of failing rounds in DIR/round-N (default: a new
#              directory under ${TMPDIR:-/tmp}/stress-findings/)
#   -s SEED    seed of the rounds' parameters, to repeat a sequence of rounds
#   -r ROUNDS  stop after ROUNDS rounds even if time is left
#   -t SECS    time limit of one command (default $STRESS_TIMEOUT, else 120): a
#              run that takes longer is a hang, and a finding
# MEMPLAN (the CLI) and PROGRAMS (the directory holding the stress program), if
# both are set, are used as they are; otherwise the script builds (scripts/build.sh,
# in $BUILD_DIR, default build) and uses what it built.
#
# Each round picks seeds A and B, THREADS (1..4), OPS (2000..200000, mostly
# small) and, one round in three, forks (STRESS_FORKS=1: the threads fork
# children now and then, and end half of them with SIGTERM at once), and runs,
# every command under `timeout`:
#   1. stress A                               -> output OUT_A
#   2. memplan record -o P -- stress A        -> OUT_A, status 0; P a valid plan
#   3. stress B                               -> output OUT_B
#   4. memplan replay -p P --stats S -- stress B  -> OUT_B, status 0
#   5. memplan replay -p P -- stress A        -> OUT_A, status 0
# The seed goes through $STRESS_SEED (`stress env THREADS OPS`), so that runs 4
# and 5 have the recorded command line: memplan keys a plan by executable and
# arguments, and a run with other arguments would find no plan at all.
# A difference, a non-zero status, a crash, a hang, a missing or invalid plan,
# a replay that found no plan for its image, or any `memplan:` line on stderr is a
# finding: the round's files stay in DIR/round-N, with commands.sh to run it again.
# Ends with one line:
#   stress: R rounds, A allocations checked (checked_blocks summed), B bytes checked, F findings in S seconds
# and exits 1 if there were findings, else 0 (2 on a usage error or a failed build).
set -euo pipefail

usage() {
  sed -n '/^# usage:/,/^# and exits/s/^# \{0,1\}//p' "$0"
}

verbose=
plain_only=
keep=
master_seed=
max_rounds=
limit=${STRESS_TIMEOUT:-120}
while [ $# -gt 0 ]; do
  case $1 in
    -h | --help) usage; exit 0 ;;
    -v) verbose=1 ;;
    -n) plain_only=1 ;;
    -k) [ $# -ge 2 ] || { usage >&2; exit 2; }; keep=$2; shift ;;
    -s) [ $# -ge 2 ] || { usage >&2; exit 2; }; master_seed=$2; shift ;;
    -r) [ $# -ge 2 ] || { usage >&2; exit 2; }; max_rounds=$2; shift ;;
    -t) [ $# -ge 2 ] || { usage >&2; exit 2; }; limit=$2; shift ;;
    --) shift; break ;;
    -*) echo "stress: unknown option $1" >&2; usage >&2; exit 2 ;;
    *) break ;;
  esac
  shift
done
[ $# -le 1 ] || { usage >&2; exit 2; }
seconds=${1:-${STRESS_SECONDS:-60}}
for n in "$seconds" "$limit" ${max_rounds:+"$max_rounds"} ${master_seed:+"$master_seed"}; do
  [[ $n =~ ^[0-9]+$ ]] || { echo "stress: not a number: $n" >&2; exit 2; }
done
[ -t 1 ] && verbose=1

root=$(cd "$(dirname "$0")/.." && pwd)
if [ -n "${MEMPLAN:-}" ] && [ -n "${PROGRAMS:-}" ]; then
  memplan=$MEMPLAN
  programs=$PROGRAMS
else
  "$root/scripts/build.sh" || { echo "stress: the build failed" >&2; exit 2; }
  build=${BUILD_DIR:-build}
  case $build in /*) ;; *) build=$root/$build ;; esac
  memplan=$build/tools/memplan
  programs=$build/tests/programs
fi
memplan=$(realpath "$memplan")
stress=$(realpath "$programs/stress")
[ -x "$memplan" ] || { echo "stress: no memplan CLI at $memplan" >&2; exit 2; }
[ -x "$stress" ] || { echo "stress: no stress program at $stress" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/stress-work.XXXXXX")
trap 'rm -rf "$work"' EXIT
if [ -z "$keep" ]; then
  keep=${TMPDIR:-/tmp}/stress-findings/$(date +%Y%m%d-%H%M%S)-$$
fi

if [ -n "$master_seed" ]; then
  RANDOM=$master_seed
else
  RANDOM=$(($(od -An -N2 -tu2 /dev/urandom)))
fi

# rand64: a 64-bit number from $RANDOM (so that -s repeats it), in $r.
rand64() {
  r=$(printf '%u' $(((RANDOM << 49) ^ (RANDOM << 34) ^ (RANDOM << 19) ^ (RANDOM << 4) ^ (RANDOM & 15))))
}

# run NAME SEED CMD...: runs CMD with STRESS_SEED=SEED under timeout in the round's
# directory; output in NAME.out, NAME.err, status in NAME.rc; and notes the
# command in commands.sh (with the round directory as the working directory).
run() {
  local name=$1 seed=$2; shift 2
  printf 'STRESS_SEED=%s STRESS_FORKS=%s timeout -k 10 %s' "$seed" "$forks" "$limit" >>"$dir/commands.sh"
  printf ' %q' "$@" >>"$dir/commands.sh"
  printf ' >%s.out 2>%s.err; echo "%s: status $?"\n' "$name" "$name" "$name" >>"$dir/commands.sh"
  set +e
  (cd "$dir" && STRESS_SEED=$seed STRESS_FORKS=$forks timeout -k 10 "$limit" "$@" >"$name.out" 2>"$name.err")
  echo $? >"$dir/$name.rc"
  set -e
}

# problem TEXT: a problem of this round.
problem() {
  problems+=("$1")
}

# counts NAME: adds the checks a run reports to the totals.
counts() {
  local line
  line=$(head -n 1 "$dir/$1.out" 2>/dev/null || true)
  if [[ $line =~ checked_bytes=([0-9]+)\ checked_blocks=([0-9]+) ]]; then
    total_bytes=$((total_bytes + BASH_REMATCH[1]))
    total_blocks=$((total_blocks + BASH_REMATCH[2]))
  fi
}

# check NAME EXPECTED_NAME: the run's status, output and stderr. Returns 1 if it
# hung (the round then stops).
check() {
  local name=$1 expected=$2 rc
  rc=$(cat "$dir/$name.rc")
  counts "$name"
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    problem "$name: no end within $limit s (a hang; status $rc from timeout)"
    return 1
  elif [ "$rc" -ge 128 ]; then
    problem "$name: killed by signal $((rc - 128))"
  elif [ "$rc" -ne 0 ]; then
    problem "$name: status $rc"
  fi
  if [ -n "$expected" ] && ! cmp -s "$dir/$expected.out" "$dir/$name.out"; then
    problem "$name: output differs from $expected.out"
  fi
  if grep -q '^stress:' "$dir/$name.err"; then
    problem "$name: $(grep -m 1 '^stress:' "$dir/$name.err")"
  fi
  if grep -q '^memplan:' "$dir/$name.err"; then
    problem "$name: $(grep -m 1 '^memplan:' "$dir/$name.err")"
  fi
  return 0
}

# stats NAME: the replay's statistics: one line, whose image found its plan (with
# forks, a line a child too: the main process's is the one of most calls).
# Sets $served to "HITS of ALLOCS".
stats() {
  local file=$dir/$1.stats line main= most=-1
  served=
  if [ ! -s "$file" ]; then
    problem "$1: no statistics written to $1.stats"
    return
  fi
  if [ "$forks" = 0 ] && [ "$(wc -l <"$file")" -ne 1 ]; then
    problem "$1: $(wc -l <"$file") statistics lines, not 1"
  fi
  while IFS= read -r line; do
    if [[ $line =~ \"allocs\":([0-9]+) ]] && [ "${BASH_REMATCH[1]}" -gt "$most" ]; then
      most=${BASH_REMATCH[1]}
      main=$line
    fi
  done <"$file"
  if [[ $main == *'"planned":0,'* ]]; then
    problem "$1: the replay found no plan for its image"
  fi
  if [[ $main =~ \"allocs\":([0-9]+).*\"hits\":([0-9]+) ]]; then
    served="${BASH_REMATCH[2]} of ${BASH_REMATCH[1]}"
  fi
}

start=$SECONDS
rounds=0 findings=0 total_bytes=0 total_blocks=0
[ -n "$verbose" ] && echo "stress: $stress, memplan $memplan, ${seconds}s${plain_only:+, plain runs only}${master_seed:+, seed $master_seed}"
while [ $((SECONDS - start)) -lt "$seconds" ]; do
  [ -n "$max_rounds" ] && [ "$rounds" -ge "$max_rounds" ] && break
  rounds=$((rounds + 1))
  round_start=$SECONDS
  rand64; seed_a=$r
  rand64; seed_b=$r
  threads=$((1 + RANDOM % 4))
  forks=$((RANDOM % 3 == 0 ? 1 : 0))
  r=$(((RANDOM << 15) | RANDOM))
  pick=$((RANDOM % 100))
  if [ "$pick" -lt 55 ]; then
    ops=$((2000 + r % 18001))
  elif [ "$pick" -lt 85 ]; then
    ops=$((20000 + r % 60001))
  else
    ops=$((80000 + r % 120001))
  fi
  # Near the end, small rounds only, to stop close to the time asked for.
  [ $((seconds - (SECONDS - start))) -lt 20 ] && [ "$ops" -gt 20000 ] && ops=$((2000 + r % 18001))

  dir=$work/round-$rounds
  mkdir -p "$dir"
  problems=()
  served=
  cmd=("$stress" env "$threads" "$ops")
  {
    echo "#!/usr/bin/env bash"
    echo "# stress round $rounds: seeds A=$seed_a B=$seed_b, $threads threads, $ops ops, forks $forks."
    echo "# Runs again in the directory of this file; expected: every *.out of seed A"
    echo "# equal to plain-a.out, of seed B to plain-b.out, every status 0."
    echo 'cd "$(dirname "$0")"'
  } >"$dir/commands.sh"

  run plain-a "$seed_a" "${cmd[@]}"
  check plain-a "" || true
  hung=
  if [ -n "$plain_only" ]; then
    run again-a "$seed_a" "${cmd[@]}"
    check again-a plain-a || hung=1
  else
    run record "$seed_a" "$memplan" record -o plan -- "${cmd[@]}"
    printf '%q show plan >show.out 2>show.err; echo "show: status $?"\n' "$memplan" >>"$dir/commands.sh"
    if check record plain-a; then
      if [ ! -s "$dir/plan" ]; then
        problem "record: no plan written"
      elif ! "$memplan" show "$dir/plan" >"$dir/show.out" 2>"$dir/show.err"; then
        problem "record: memplan show rejects the plan: $(head -n 1 "$dir/show.err")"
      fi
    else
      hung=1
    fi
  fi
  if [ -z "$hung" ]; then
    run plain-b "$seed_b" "${cmd[@]}"
    check plain-b "" || hung=1
  fi
  if [ -z "$hung" ] && [ -n "$plain_only" ]; then
    run again-b "$seed_b" "${cmd[@]}"
    check again-b plain-b || hung=1
    if [ -z "$hung" ]; then
      run again2-a "$seed_a" "${cmd[@]}"
      check again2-a plain-a || true
    fi
  elif [ -z "$hung" ] && [ -s "$dir/plan" ]; then
    run replay-b "$seed_b" "$memplan" replay -p plan --stats replay-b.stats -- "${cmd[@]}"
    if check replay-b plain-b; then
      stats replay-b
      run replay-a "$seed_a" "$memplan" replay -p plan -- "${cmd[@]}"
      check replay-a plain-a || true
    fi
  fi
  # What the plain runs print must not depend on anything but the arguments.
  for f in plain-a plain-b; do
    [ -s "$dir/$f.out" ] && ! grep -Eq '^stress seed=[0-9]+ threads=[0-9]+ ops=[0-9]+ checked_bytes=[0-9]+ checked_blocks=[0-9]+ digest=[0-9a-f]{16}$' "$dir/$f.out" &&
      problem "$f: unexpected output: $(head -c 200 "$dir/$f.out")"
  done

  took=$((SECONDS - round_start))
  if [ ${#problems[@]} -gt 0 ]; then
    findings=$((findings + 1))
    mkdir -p "$keep"
    rm -rf "$keep/round-$rounds"
    mv "$dir" "$keep/round-$rounds"
    chmod +x "$keep/round-$rounds/commands.sh"
    printf '%s\n' "${problems[@]}" >"$keep/round-$rounds/problems.txt"
    echo "stress: FINDING in round $rounds (seeds A=$seed_a B=$seed_b, $threads threads, $ops ops, forks $forks):"
    printf '  %s\n' "${problems[@]}"
    echo "  files and commands: $keep/round-$rounds (commands.sh runs it again)"
  else
    rm -rf "$dir"
    [ -n "$verbose" ] &&
      echo "round $rounds: seeds $seed_a $seed_b, $threads threads, $ops ops, forks $forks: ok${served:+, replay B served $served from the arena} (${took}s)"
  fi
done
echo "stress: $rounds rounds, $total_blocks allocations checked (checked_blocks summed), $total_bytes bytes checked, $findings findings in $((SECONDS - start)) seconds"
[ "$findings" -eq 0 ]
