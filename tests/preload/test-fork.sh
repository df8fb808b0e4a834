#!/usr/bin/env bash
# fork with and without exec, with another thread allocating during the forks: the
# children free inherited blocks (arena blocks in replay) and never deadlock; the
# exec'ed shell gets a plan of its own.
. "$(dirname "$0")/lib.sh"

run_plain fork "$PROGRAMS/forker"
run_record fork timeout 60 "$PROGRAMS/forker"
same_as_plain fork record
"$PLAN_DIGEST" "$WORK/fork.plan" >"$WORK/digest"
grep -q '^image .*/forker ' "$WORK/digest" || fail "no plan for the forking program"
grep -Eq '^image .*/(dash|bash|sh) ' "$WORK/digest" || fail "no plan for the exec'ed shell"
for i in 1 2 3; do
  run_replay fork timeout 60 "$PROGRAMS/forker"
  same_as_plain fork replay
done
[ "$(stat_sum fork hits)" -gt 0 ] || fail "replay served nothing from the arena"
echo "fork: ok"
