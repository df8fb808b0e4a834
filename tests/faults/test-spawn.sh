#!/usr/bin/env bash
# Python multiprocessing with the 'spawn' start method passes descriptor
# numbers to its workers in their arguments (spawn_main(tracker_fd=..,
# pipe_handle=..), resource_tracker main(fd)), and a plan is found by
# executable and arguments. With memplan's own descriptors out of the way, the
# numbers are the same recording and replaying, so every worker finds its
# image: output identical, and the main process and both pool workers served
# from the arena. (They once differed between record and replay, and the
# workers ran without a plan.) The resource tracker is left out: it outlives
# the main process, briefly (memplan record waits for it, quietly: it ends as
# the main process's pipe closes), and replay does not wait for it.
. "$(dirname "$0")/lib.sh"
need python3
# The interpreter itself, not a wrapper (pyenv's shim is a shell script).
PYTHON=$(python3 -c 'import sys; print(sys.executable)')
cat >"$WORK/spawn.py" <<'PY'
import multiprocessing as mp

def f(x):
    return sum(i * i for i in range(x * 1000))

if __name__ == "__main__":
    ctx = mp.get_context("spawn")
    with ctx.Pool(2) as pool:
        print(pool.map(f, range(8)))
PY

run_plain spawn "$PYTHON" "$WORK/spawn.py"
[ "$(rc spawn plain)" -eq 0 ] || fail "the spawn script failed on its own: $(cat "$WORK/spawn.plain.err")"
run spawn record bounded 60 "$MEMPLAN" record -o "$WORK/spawn.plan" -- "$PYTHON" "$WORK/spawn.py"
same_as_plain spawn record
no_memplan_messages spawn record
images=$("$MEMPLAN" show --json "$WORK/spawn.plan" | python3 -c 'import json, sys; print(len(json.load(sys.stdin)["images"]))') ||
  fail "cannot read the plan"
[ "$images" -ge 3 ] || fail "the plan has $images images, not 3 (main, 2 workers)"
run spawn replay bounded 60 "$MEMPLAN" replay -p "$WORK/spawn.plan" --stats "$WORK/spawn.stats" -- \
  "$PYTHON" "$WORK/spawn.py"
same_as_plain spawn replay
no_memplan_messages spawn replay
python3 -S - "$WORK/spawn.stats" <<'PY' || fail "fewer than 3 processes of the replay (main, 2 workers) found their plan"
import json, sys
served = 0
for line in open(sys.argv[1]):
    d = json.loads(line)
    print(f"pid {d['pid']}: {d['allocs']} allocs, {d['hits']} hits, no_plan {d['misses']['no_plan']}")
    if d["hits"] > 0 and d["misses"]["no_plan"] == 0:
        served += 1
sys.exit(0 if served >= 3 else 1)
PY
echo "multiprocessing spawn: ok"
