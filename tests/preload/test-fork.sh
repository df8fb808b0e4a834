#!/usr/bin/env bash
# fork with and without exec, with another thread allocating during the forks: the
# children free inherited blocks (arena blocks in replay) and never deadlock; the
# exec'ed shell gets a plan of its own, and so does each child forked without exec,
# which replays it in an arena of its own.
. "$(dirname "$0")/lib.sh"

# forked_lines NAME EXE: "fork allocs hits" for each stats line of a child of
# executable EXE (a regular expression on its file name) forked without exec.
forked_lines() {
  python3 -S -c '
import json, re, sys
for line in open(sys.argv[1]):
    d = json.loads(line)
    if "fork" in d and re.fullmatch(sys.argv[2], d["exe"].rsplit("/", 1)[-1]):
        print(d["fork"], d["allocs"], d["hits"])' "$WORK/$1.stats" "$2"
}

run_plain fork "$PROGRAMS/forker"
run_record fork timeout 60 "$PROGRAMS/forker"
same_as_plain fork record
"$PLAN_DIGEST" "$WORK/fork.plan" >"$WORK/digest"
grep -q '^image .*/forker ' "$WORK/digest" || fail "no plan for the forking program"
grep -Eq '^image .*/(dash|bash|sh) ' "$WORK/digest" || fail "no plan for the exec'ed shell"
# 20 children allocate and end; the 21st execs the shell at once and has no plan.
forked=$("$MEMPLAN" show --all "$WORK/fork.plan" | grep -c '/forker (pid [0-9]*, forked without exec)$' || true)
[ "$forked" -eq 20 ] || fail "$forked plans of children forked without exec, not 20"
for i in 1 2 3; do
  run_replay fork timeout 60 "$PROGRAMS/forker"
  same_as_plain fork replay
  # Each child replays its own plan: its 1000 allocations, all from its arena.
  forked_lines fork forker >"$WORK/forked"
  [ "$(wc -l <"$WORK/forked")" -eq 20 ] || fail "replay: $(wc -l <"$WORK/forked") forked children wrote statistics, not 20"
  [ "$(cut -d' ' -f1 "$WORK/forked" | sort -n | tr '\n' ' ')" = "$(seq 1 20 | tr '\n' ' ')" ] ||
    fail "replay: the children are not forks 1 to 20: $(cut -d' ' -f1 "$WORK/forked" | tr '\n' ' ')"
  awk '$2 != 1000 || $3 != 1000 { exit 1 }' "$WORK/forked" ||
    fail "replay: a child did not serve its 1000 allocations from its plan: $(tr '\n' ';' <"$WORK/forked")"
done
[ "$(stat_sum fork hits)" -gt 0 ] || fail "replay served nothing from the arena"

# A real program's children forked without exec: a multiprocessing pool. (Other
# images may fork too: a python3 that is a shell script, as pyenv's, forks
# subshells.)
need python3
cat >"$WORK/pool.py" <<'PY'
import multiprocessing as mp
def work(n):
    return sum(len(str(i)) for i in range(n))
if __name__ == "__main__":
    mp.set_start_method("fork")
    with mp.Pool(2) as p:
        print(p.map(work, [20000, 30000, 40000, 50000]))
PY
run_plain pool python3 "$WORK/pool.py"
run_record pool python3 "$WORK/pool.py"
same_as_plain pool record
workers=$("$MEMPLAN" show --all "$WORK/pool.plan" | grep -c 'python3[.0-9]* (pid [0-9]*, forked without exec)$' || true)
[ "$workers" -eq 2 ] || fail "pool: $workers plans of forked workers, not 2"
run_replay pool python3 "$WORK/pool.py"
same_as_plain pool replay
forked_lines pool 'python3[.0-9]*' >"$WORK/forked"
[ "$(wc -l <"$WORK/forked")" -eq 2 ] || fail "pool: $(wc -l <"$WORK/forked") workers wrote statistics, not 2"
# Which worker takes which task varies from run to run: a worker recorded with
# one task may run two (its start-up is a dozen allocations, a task another
# dozen of sizes it may not have seen), and serve less than half its own. The
# workers together repeat what was recorded: at least half of it served.
awk '{ allocs += $2; hits += $3 } END { exit hits * 2 < allocs }' "$WORK/forked" ||
  fail "pool: the workers served less than half their allocations from their plans: $(tr '\n' ';' <"$WORK/forked")"
# A shell forks for every command of a loop's every round, and each child
# allocates before its exec: the plan keeps the first 64 of an image's children
# forked without exec, not one image per round (a plan that grew with the
# loop's length). Each child past them replays the image of the recorded
# sibling it repeats: the loop forks three kinds of child in turn, which the
# last recorded siblings show ("match": "sibling", replay.c sibling_image).
loop='i=0; while [ $i -lt 60 ]; do echo "$i" | cat | cat >/dev/null; i=$((i + 1)); done; echo done'
run_plain loop sh -c "$loop"
run_record loop sh -c "$loop"
same_as_plain loop record
shell=$(basename "$(readlink -f "$(command -v sh)")")
children=$("$MEMPLAN" show --all "$WORK/loop.plan" | grep -c "/$shell (pid [0-9]*, forked without exec)\$" || true)
[ "$children" -eq 64 ] || fail "loop: $children plans of the shell's forked children, not 64"
run_replay loop sh -c "$loop"
same_as_plain loop replay
python3 -S -c '
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if "\"fork\"" in l]
own = sum(1 for d in lines if d["match"] == "exact")
past = [d for d in lines if d["match"] == "sibling"]
assert own == 64, "%d forked children replayed their own image, not 64" % own
assert len(past) >= 100, "only %d forked children past the 64 replayed a sibling image" % len(past)
allocs, hits = sum(d["allocs"] for d in past), sum(d["hits"] for d in past)
assert allocs > 0 and hits * 100 >= allocs * 95, "siblings served %d of %d" % (hits, allocs)
print("loop: %d forked children on their own image, %d on a sibling image (%d of %d allocations served)"
      % (own, len(past), hits, allocs))' "$WORK/loop.stats" || fail "loop: statistics of the forked children"
echo "loop: 180 forks, $children of them planned"
# The same loop recorded for 10 rounds and run for 50: the shell's children
# past the 30 recorded replay the siblings they repeat, and are served as well
# as the 30, which are the recorded shell's own children (the shell replays
# the image of other arguments, and its children are that image's).
short='i=0; while [ $i -lt 10 ]; do echo "$i" | cat | cat >/dev/null; i=$((i + 1)); done'
long='i=0; while [ $i -lt 50 ]; do echo "$i" | cat | cat >/dev/null; i=$((i + 1)); done'
run_plain longer sh -c "$long"
"$MEMPLAN" record -o "$WORK/longer.plan" -- sh -c "$short" >/dev/null
run_replay longer sh -c "$long"
same_as_plain longer replay
python3 -S -c '
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
def share(match):
    them = [d for d in lines if "fork" in d and d["match"] == match]
    return len(them), sum(d["hits"] for d in them) / max(1, sum(d["allocs"] for d in them))
recorded, past = share("exact"), share("sibling")
assert recorded[0] == 30 and past[0] == 120, (recorded, past)
assert past[1] >= recorded[1] - 0.02, (recorded, past)
print("longer: 30 forked children on their fork of the recorded shell, %.1f%% served; "
      "120 past them on sibling images, %.1f%%" % (100 * recorded[1], 100 * past[1]))' "$WORK/longer.stats" ||
  fail "longer: the children past the recorded ones"
# The loop in a subshell of its own, its output piped on: the children are
# the subshell's, which is itself a forked child of a shell of other
# arguments. Its children once found no plan (0% served), and those past the
# recorded ones, checked against the last recorded sibling alone, took two
# like children in a row for a turn of one (a third of them 0%).
for shell in sh bash; do
  command -v "$shell" >/dev/null || continue
  short='i=0; while [ $i -lt 10 ]; do echo x | cat | cat; i=$((i + 1)); done | wc -l'
  long='i=0; while [ $i -lt 50 ]; do echo x | cat | cat; i=$((i + 1)); done | wc -l'
  run_plain "piped-$shell" "$shell" -c "$long"
  "$MEMPLAN" record -o "$WORK/piped-$shell.plan" -- "$shell" -c "$short" >/dev/null
  run_replay "piped-$shell" "$shell" -c "$long"
  same_as_plain "piped-$shell" replay
  python3 -S -c '
import json, sys
forked = [json.loads(l) for l in open(sys.argv[1]) if "\"fork\"" in l]
allocs, hits = sum(d["allocs"] for d in forked), sum(d["hits"] for d in forked)
print("%s: %d forked children, %d of %d allocations served" % (sys.argv[2], len(forked), hits, allocs))
assert len(forked) >= 150 and hits * 100 >= allocs * 95' "$WORK/piped-$shell.stats" "piped-$shell" ||
    fail "piped-$shell: the subshell's children were served poorly"
done
# A bash loop whose every tenth turn forks two more, and whose children change
# after its first ten turns, shows no whole turn in the 64 forks a recording
# keeps: its children past them took their parent's image (25 of them, 92.8%
# served in all). They now take the siblings of the turn that holds for three
# forks in four.
if command -v bash >/dev/null; then
  cat >"$WORK/irregular.sh" <<'SH'
declare -A h
for i in $(seq 1 40); do
  x=$(echo "$i" | tr 0-9 a-j); h[$x]=$((i * i))
  (y=$(printf '%05d' "$i"); echo "$y" >/dev/null)
  if ((i % 10 == 0)); then echo "$i $x ${h[$x]} $(basename /a/b/c$i) $(expr $i + 1)"; fi
done
SH
  run_plain irregular bash "$WORK/irregular.sh"
  run_record irregular bash "$WORK/irregular.sh"
  run_replay irregular bash "$WORK/irregular.sh"
  same_as_plain irregular replay
  python3 -S -c '
import json, sys
forked = [json.loads(l) for l in open(sys.argv[1]) if "\"fork\"" in l]
parent = [d for d in forked if d["match"] == "parent"]
allocs, hits = sum(d["allocs"] for d in forked), sum(d["hits"] for d in forked)
print("irregular: %d forked children, %d on their parent image, %d of %d allocations served" %
      (len(forked), len(parent), hits, allocs))
assert len(forked) >= 80 and not parent and hits * 100 >= allocs * 90' "$WORK/irregular.stats" ||
    fail "irregular: the children past the recorded forks found no sibling"
fi

# A forked child's statistics are its own: one that made a single allocation
# once said it had walked its parent's 20 stacks (walks, unwinds).
cat >"$WORK/walker.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#define SITE(n) static __attribute__((noinline)) void *site##n(void) { return malloc(16 + n); }
SITE(0) SITE(1) SITE(2) SITE(3) SITE(4) SITE(5) SITE(6) SITE(7) SITE(8) SITE(9)
int main(void)
{
	void *(*sites[])(void) = {site0, site1, site2, site3, site4, site5, site6, site7, site8, site9};
	for (int round = 0; round < 3; round++)
		for (int i = 0; i < 10; i++)
			free(sites[i]());
	pid_t pid = fork();
	if (pid == 0) {
		printf("child\n");
		exit(0);
	}
	waitpid(pid, NULL, 0);
	return 0;
}
C
cc -O1 "$WORK/walker.c" -o "$WORK/walker"
run_plain walker "$WORK/walker"
run_record walker "$WORK/walker"
run_replay walker "$WORK/walker"
same_as_plain walker replay
python3 -S -c '
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
child = [d for d in lines if "fork" in d]
parent = [d for d in lines if "fork" not in d]
print("walker: child %s, parent %s" % ([(d["allocs"], d["walks"], d["unwinds"]) for d in child],
                                       [(d["allocs"], d["walks"], d["unwinds"]) for d in parent]))
assert len(child) == 1 and len(parent) == 1 and parent[0]["walks"] >= 10
assert child[0]["walks"] <= child[0]["allocs"] and child[0]["unwinds"] <= child[0]["allocs"]' \
  "$WORK/walker.stats" || fail "walker: the forked child counts the walks of its parent"
# A forked child's image lists the sites it allocated from, not its parent's:
# a bash child of two dozen allocations once took 120 KB of plan.
"$MEMPLAN" show --json "$WORK/walker.plan" | python3 -S -c '
import json, sys
images = json.load(sys.stdin)["images"]
sites = {im["forked"]: im["sites"] for im in images}
print("walker: sites of the parent %d, of the child %d" % (sites[False], sites[True]))
assert len(images) == 2 and sites[False] >= 10 and sites[True] <= 2' ||
  fail "walker: the forked child's image lists its parent's sites"
echo "fork: ok"
