#!/usr/bin/env bash
# The program's signal handlers, landing while it allocates. A SIGALRM
# handler that called exit() hung recording: it ran on a thread interrupted
# inside memplan's code, holding the recording's lock, and memplan's exit
# handler waited for that lock. Handlers now wait until their thread leaves
# memplan's code; the queued signals below check that they still get what
# they were sent (sender, code, value, order) and that sigaction reports the
# program's own handlers.
. "$(dirname "$0")/lib.sh"

prog=$PROGRAMS/signal_handlers

# timeout's status after its TERM (124), or after its KILL (137).
hung_if_killed() {
  case "$(cat "$WORK/$1.rc")" in
    124|137) fail "$2: hung (killed after 60 s)" ;;
  esac
}

# exit(3) from a handler, at various points of two threads' allocations.
run_plain exit "$prog" exit 20000
[ "$(cat "$WORK/exit.plain.rc")" = 3 ] || fail "signal_handlers exit: status $(cat "$WORK/exit.plain.rc") on its own"
for us in 5000 20000 50000 5000 20000 50000; do
  rm -f "$WORK/exit.plan"
  set +e
  timeout -k 5 60 "$MEMPLAN" record -o "$WORK/exit.plan" -- "$prog" exit $us \
    >"$WORK/exit.record.out" 2>"$WORK/exit.record.err"
  echo $? >"$WORK/exit.record.rc"
  set -e
  hung_if_killed exit.record "record, exit() in a handler after $us us"
  same_as_plain exit record
  [ -s "$WORK/exit.plan" ] || fail "record after $us us: no plan written"
  "$MEMPLAN" show "$WORK/exit.plan" >/dev/null || fail "record after $us us: the plan does not read back"
  set +e
  timeout -k 5 60 "$MEMPLAN" replay -p "$WORK/exit.plan" --stats "$WORK/exit.stats" -- "$prog" exit $us \
    >"$WORK/exit.replay.out" 2>"$WORK/exit.replay.err"
  echo $? >"$WORK/exit.replay.rc"
  set -e
  hung_if_killed exit.replay "replay, exit() in a handler after $us us"
  same_as_plain exit replay
done
hit_ratio_at_least exit 90

# The same handler set by a library's initialiser, before memplan starts: it
# must be held as well, and each plan written (2 runs of 4 lost theirs when
# only handlers set later were held).
for us in 5000 20000 50000 3000 10000 30000; do
  rm -f "$WORK/exit.plan"
  set +e
  timeout -k 5 60 "$MEMPLAN" record -o "$WORK/exit.plan" -- "$prog" exit-early $us \
    >"$WORK/exit.record.out" 2>"$WORK/exit.record.err"
  echo $? >"$WORK/exit.record.rc"
  set -e
  hung_if_killed exit.record "record, exit() in a library's handler after $us us"
  same_as_plain exit record
  [ -s "$WORK/exit.plan" ] || fail "record, a library's handler after $us us: no plan written: $(cat "$WORK/exit.record.err")"
done

# The same handler set by the rt_sigaction system call, as the Go runtime sets
# its own: memplan cannot hold it, and it lands inside memplan's code. The
# process must still end as it would, with at most one line saying that its
# plan is lost; replay writes its statistics.
for us in 5000 20000 50000; do
  set +e
  timeout -k 5 60 "$MEMPLAN" record -o "$WORK/raw.plan" -- "$prog" exit-raw $us \
    >"$WORK/exit.record.out" 2>"$WORK/exit.record.err"
  echo $? >"$WORK/exit.record.rc"
  timeout -k 5 60 "$MEMPLAN" replay -p "$WORK/exit.plan" --stats "$WORK/raw.stats" -- "$prog" exit-raw $us \
    >"$WORK/exit.replay.out" 2>"$WORK/exit.replay.err"
  echo $? >"$WORK/exit.replay.rc"
  set -e
  hung_if_killed exit.record "record, exit() in a raw handler after $us us"
  hung_if_killed exit.replay "replay, exit() in a raw handler after $us us"
  same_as_plain exit record
  same_as_plain exit replay
  if grep -v -e "^memplan: a signal handler ended the process inside an allocation; this process's plan is not written\$" \
      -e "^memplan: .*raw.plan: no process wrote a plan" "$WORK/exit.record.err"; then
    fail "record, raw handler: unexpected messages"
  fi
done
[ -s "$WORK/raw.stats" ] || fail "replay, raw handler: no statistics"

# Queued signals with their siginfo, and a handler set with SA_RESETHAND.
run_plain info "$prog" info 2000
grep -q "^2000 queued signals arrived, 0 with a wrong" "$WORK/info.plain.out" ||
  fail "signal_handlers info fails on its own: $(cat "$WORK/info.plain.out")"
for round in 1 2 3; do
  set +e
  timeout -k 5 60 "$MEMPLAN" record -o "$WORK/info.plan" -- "$prog" info 2000 \
    >"$WORK/info.record.out" 2>"$WORK/info.record.err"
  echo $? >"$WORK/info.record.rc"
  timeout -k 5 60 "$MEMPLAN" replay -p "$WORK/info.plan" --stats "$WORK/info.stats" -- "$prog" info 2000 \
    >"$WORK/info.replay.out" 2>"$WORK/info.replay.err"
  echo $? >"$WORK/info.replay.rc"
  set -e
  same_as_plain info record
  same_as_plain info replay
done
hit_ratio_at_least info 90
# NAME ARGS...: records and replays ARGS, each bounded at 120 s, and checks
# both against the plain run (run_plain NAME ARGS first).
record_and_replay() {
  local name=$1; shift
  set +e
  timeout -k 5 120 "$MEMPLAN" record -o "$WORK/$name.plan" -- "$@" \
    >"$WORK/$name.record.out" 2>"$WORK/$name.record.err"
  echo $? >"$WORK/$name.record.rc"
  timeout -k 5 120 "$MEMPLAN" replay -p "$WORK/$name.plan" --stats "$WORK/$name.stats" -- "$@" \
    >"$WORK/$name.replay.out" 2>"$WORK/$name.replay.err"
  echo $? >"$WORK/$name.replay.rc"
  set -e
  same_as_plain "$name" record
  same_as_plain "$name" replay
}

# Forks under a 20 us interval timer: a signal held by the forking thread is
# the parent's, and the child must not run its handler (569 children of
# 3,000 did).
run_plain fork "$prog" fork 3000
grep -q "^3000 forks, 0 children" "$WORK/fork.plain.out" || fail "signal_handlers fork fails on its own"
record_and_replay fork "$prog" fork 3000

# Threads created one after another under a 20 us interval timer: a signal
# held on the creator while libc made the thread was blocked in the new
# thread for good (253 of 10,000 threads).
run_plain threads "$prog" threads 5000
grep -q "^5000 threads, 0 started" "$WORK/threads.plain.out" || fail "signal_handlers threads fails on its own"
record_and_replay threads "$prog" threads 5000

# Signals a parent left ignored stay ignored across exec: memplan hooks only
# those at their default, and the hook's one call (which reads what it
# replaced) puts back what it finds ignored. A raised SIGPIPE that found the
# hook would end the process. Every disposition is set here, not inherited:
# a test run in the background (or under nohup) starts with SIGINT and
# SIGQUIT (or SIGHUP) ignored, which a shell's trap cannot reset.
ignoring=(env --default-signal=QUIT,TERM,USR1 --ignore-signal=HUP,INT,PIPE)
run_plain dispositions "${ignoring[@]}" "$prog" dispositions
[ "$(grep -c "ignored, raised and still here" "$WORK/dispositions.plain.out")" = 3 ] &&
  [ "$(grep -c " default$" "$WORK/dispositions.plain.out")" = 3 ] ||
  fail "signal_handlers dispositions: unexpected on its own: $(cat "$WORK/dispositions.plain.out")"
record_and_replay dispositions "${ignoring[@]}" "$prog" dispositions

# Real programs whose handlers land while they allocate: bash reaping 300
# background jobs (SIGCHLD), CPython under a 0.5 ms interval timer.
run_real() {
  local name=$1; shift
  run_plain "$name" "$@"
  [ "$(cat "$WORK/$name.plain.rc")" = 0 ] || fail "$name fails on its own"
  record_and_replay "$name" "$@"
  hit_ratio_at_least "$name" 90
}
run_real bash-jobs bash -c 'for i in $(seq 1 300); do (exit $((i % 7))) & p+=($!); done
  s=0; for j in "${p[@]}"; do wait "$j"; s=$((s + $?)); done; echo "$s"'
if command -v python3 >/dev/null; then
  run_real python-timer python3 -c '
import signal
ticks = [0]
signal.signal(signal.SIGALRM, lambda *a: ticks.__setitem__(0, ticks[0] + 1))
signal.setitimer(signal.ITIMER_REAL, 0.0005, 0.0005)
d = {}
for i in range(300000):
    d[str(i)] = [i] * 3
signal.setitimer(signal.ITIMER_REAL, 0)
print(len(d), sum(len(v) for v in d.values()), ticks[0] > 0)'
fi
echo "signal handlers: exit() in 15 records and 9 replays, 2000 queued signals x 6 as sent, 6000 forks, 10000 threads, ignored signals kept, bash and python3"
