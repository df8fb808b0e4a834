#!/usr/bin/env bash
# A program that sandboxes itself runs under record and replay as it runs
# alone. memplan finishes before the sandbox takes effect (record writes the
# process's plan, replay its statistics, marked "sandboxed") and opens no file
# after it. Before, a seccomp filter that ends the process at an open (as
# vsftpd's and other allow-list sandboxes do) ended it under record at its exit
# (status 159, SIGSYS, and no plan) and under replay at its next read of the
# plan; after a chroot (its own, or a child's that shares its file system
# context, as Chromium's zygote has), under a Landlock ruleset, or under
# man-db's filter (which answers ENOSYS), the plan and statistics were lost,
# with memplan's complaints on stderr.
. "$(dirname "$0")/lib.sh"

prog=$PROGRAMS/sandboxed

# The statistics line of the process that ran the command (not its child).
main_line_key() {
  python3 -S -c '
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
main = [d for d in lines if "fork" not in d]
print(main[0].get(sys.argv[2], "absent") if main else "no line")' "$WORK/$1.stats" "$2"
}

# The chroot case runs in an empty directory, its new root.
mkdir "$WORK/empty"
cd "$WORK/empty"
for mode in prctl syscall allowlist landlock chroot clonefs tsync probe; do
  run_plain "$mode" "$prog" "$mode" 20000
  [ "$(cat "$WORK/$mode.plain.rc")" = 0 ] || fail "$mode: the program fails on its own"
  if grep -q 'unavailable$' "$WORK/$mode.plain.out"; then
    echo "$mode: not run here ($(cat "$WORK/$mode.plain.out"))"
    continue
  fi
  run_record "$mode" "$prog" "$mode" 20000
  same_as_plain "$mode" record
  no_memplan_messages "$mode" record
  [ -s "$WORK/$mode.plan" ] || fail "$mode: record wrote no plan"
  run_replay "$mode" "$prog" "$mode" 20000
  same_as_plain "$mode" replay
  no_memplan_messages "$mode" replay
  sandboxed=$(main_line_key "$mode" sandboxed)
  if [ "$mode" != probe ]; then
    grep -q 'counted up to the sandbox they set: sandboxed' "$WORK/$mode.replay.err" ||
      fail "$mode: the summary does not say the figures end at the sandbox: $(cat "$WORK/$mode.replay.err")"
  fi
  if [ "$mode" = tsync ]; then
    # How much of the threads' work came before the sandbox varies from run
    # to run: the same output, no word, and no overlap (the arena's check)
    # are what is asked.
    [ "$sandboxed" = True ] || fail "$mode: statistics do not say sandboxed ($sandboxed)"
  elif [ "$mode" = probe ]; then
    # libseccomp's probes (calls the kernel refuses) are no sandbox: the whole
    # run is recorded and served.
    [ "$sandboxed" = absent ] || fail "probe: statistics say sandboxed ($sandboxed)"
    hit_ratio_at_least "$mode" 95
  else
    [ "$sandboxed" = True ] || fail "$mode: statistics do not say sandboxed ($sandboxed)"
    # What ran before the sandbox, served as recorded.
    hit_ratio_at_least "$mode" 99
  fi
done

# Strict replay judges a process that sandboxed itself by its own figures: the
# command's statistics file is out of its reach (the allow-list ends the
# process at an open).
set +e
"$MEMPLAN" replay -p "$WORK/allowlist.plan" --strict --min-hit-rate 90 -- "$prog" allowlist 20000 \
  >"$WORK/strict.out" 2>"$WORK/strict.err"
rc=$?
set -e
[ "$rc" = 0 ] || fail "strict: exit status $rc: $(cat "$WORK/strict.err")"
cmp -s "$WORK/allowlist.plain.out" "$WORK/strict.out" || fail "strict: output differs from the plain run"

# Started in a sandbox that answers ENOSYS to creating a file (as man-db
# starts its helpers): not recorded, and not a word on stderr, where each
# process said that it could not write the plan; replay, which may append to
# the statistics file memplan replay made, names sort as not in the plan.
seq 20000 | sort -R --random-source=<(yes) >"$WORK/numbers"
for name in inherited inherited-sort; do
  inner=("$prog" prctl 20000)
  [ "$name" = inherited-sort ] && inner=(sort -n "$WORK/numbers")
  run_plain "$name" "$prog" exec "${inner[@]}"
  [ "$(cat "$WORK/$name.plain.rc")" = 0 ] || fail "$name: fails on its own"
  run_record "$name" "$prog" exec "${inner[@]}"
  same_as_plain "$name" record
  no_memplan_messages "$name" record
  run_replay "$name" "$prog" exec "${inner[@]}"
  same_as_plain "$name" replay
  no_memplan_messages "$name" replay
done
grep -q "not in the plan: sort" "$WORK/inherited-sort.replay.err" ||
  fail "inherited-sort: the summary does not name sort: $(cat "$WORK/inherited-sort.replay.err")"

# man-db runs its helpers in a sandbox of their own (forked children that set
# a seccomp filter and exit, or exec col): a plan of their part before it, and
# nothing said on stderr.
if command -v man >/dev/null && [ -r /usr/share/man/man1/ls.1.gz ]; then
  export MANWIDTH=80
  page=(man -P cat -l /usr/share/man/man1/ls.1.gz)
  run_plain man "${page[@]}"
  [ "$(cat "$WORK/man.plain.rc")" = 0 ] || fail "man fails on its own"
  run_record man "${page[@]}"
  same_as_plain man record
  no_memplan_messages man record
  forked=$("$MEMPLAN" show "$WORK/man.plan" | grep -c '^image: .*forked without exec' || true)
  [ "$forked" -ge 1 ] || fail "man: no plan of the children it sandboxes"
  run_replay man "${page[@]}"
  same_as_plain man replay
  no_memplan_messages man replay
  hit_ratio_at_least man 95
  echo "man: $forked sandboxed children in the plan"
else
  echo "man or ls(1)'s page is not installed; that case is not run here"
fi
echo "sandboxed programs ran as on their own"
