#!/usr/bin/env bash
# Every way out of a process leaves a complete plan (never a torn file, never a
# leftover temp file): return, exit, _exit, _Exit, abort, SIGSEGV, SIGTERM, SIGINT, and exec
# (where the exec'ed program adds its own image). SIGKILL may leave no plan, but
# never a corrupt one. Replay writes its statistics on _exit too.
. "$(dirname "$0")/lib.sh"

# SIGINT and SIGQUIT at their defaults, as in a terminal, whatever the test runner
# left them at (a shell starts background commands with them ignored).
for how in return exit _exit _Exit abort segv term int sysv_signal bsd_signal sigset dispositions exec execlp; do
  run_plain "$how" env --default-signal=INT,QUIT "$PROGRAMS/exit_paths" "$how"
  run_record "$how" env --default-signal=INT,QUIT "$PROGRAMS/exit_paths" "$how"
  same_as_plain "$how" record
  "$PLAN_DIGEST" "$WORK/$how.plan" >"$WORK/$how.digest" || fail "$how: plan unreadable"
  # 1000 freed + 100 kept blocks at least, the kept ones never freed.
  entries=$(awk '$1 == "image" && $2 ~ /exit_paths$/ { print $NF }' "$WORK/$how.digest")
  [ "${entries:-0}" -ge 1100 ] || fail "$how: plan has ${entries:-no} entries for exit_paths"
  never_freed=$(awk '$1 == "entry" && $7 == 18446744073709551615' "$WORK/$how.digest" | wc -l)
  [ "$never_freed" -ge 100 ] || fail "$how: only $never_freed never-freed entries"
  case $how in
  exec | execlp) grep -q '^image .*/true ' "$WORK/$how.digest" || fail "$how: no image for the exec'ed program" ;;
  esac
done
# memplan's hook on those signals is invisible: the program sees the defaults.
grep -q "^2 sigaction default" "$WORK/dispositions.plain.out" || fail "dispositions: unexpected plain run"
leftovers=$(find "$WORK" -name '*.tmp.*' | wc -l)
[ "$leftovers" -eq 0 ] || fail "temporary files left behind"

# Replay statistics on _exit.
run_replay _exit "$PROGRAMS/exit_paths" _exit
same_as_plain _exit replay
[ "$(stat_sum _exit hits)" -ge 1100 ] || fail "_exit: replay statistics missing or low"

# SIGKILL in the middle of a long run: no plan, or a valid one. memplan is
# killed too, and cannot remove its statistics file: it is made in $WORK.
set +e
TMPDIR="$WORK" "$MEMPLAN" record -o "$WORK/killed.plan" -- "$PROGRAMS/pattern_threads" 2 100000000 >/dev/null 2>&1 &
pid=$!
sleep 1
pkill -KILL -f "pattern_threads 2 100000000"
wait $pid
set -e
if [ -e "$WORK/killed.plan" ]; then
  "$PLAN_DIGEST" "$WORK/killed.plan" >/dev/null || fail "SIGKILL left a corrupt plan"
fi
echo "exit paths: ok"
