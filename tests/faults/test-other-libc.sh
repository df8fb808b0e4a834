#!/usr/bin/env bash
# A program of another C library (musl's, built with musl-gcc): its loader
# cannot load memplan's library, built on glibc, and with memplan in LD_PRELOAD
# will not start the program at all (exit 127, its loader's error lines).
# memplan record refuses such a command in one line; replay runs it without
# memplan, saying so; and a process under memplan that execs or spawns one
# (a shell, a Python subprocess, posix_spawn, a build that runs a musl tool)
# leaves memplan out of its LD_PRELOAD: it runs as it would alone. (Once: every
# such child exited 127 under memplan.)
. "$(dirname "$0")/lib.sh"
need musl-gcc python3

cat >"$WORK/musl_prog.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* Allocates, and prints its LD_PRELOAD: what is left of it once memplan's
 * entries are out. */
int main(void)
{
	char *p = malloc(100);
	const char *preload = getenv("LD_PRELOAD");
	strcpy(p, "musl ran");
	printf("%s; LD_PRELOAD=%s\n", p, preload ? preload : "(unset)");
	free(p);
	return 0;
}
C
musl-gcc -O2 -o "$WORK/musl_prog" "$WORK/musl_prog.c"
# The command itself.
run_record direct "$WORK/musl_prog"
[ "$(rc direct record)" -eq 1 ] && [ ! -s "$WORK/direct.record.out" ] ||
  fail "record of a musl program: status $(rc direct record), output '$(cat "$WORK/direct.record.out")'"
grep -q "^memplan: .*musl_prog is run by another C library's loader (/lib/ld-musl-[a-z0-9_]*\.so\.1), which cannot load memplan's library: record a build linked against glibc$" \
  "$WORK/direct.record.err" || fail "record of a musl program: $(cat "$WORK/direct.record.err")"
# A plan of a glibc program, for the replays below.
run_plain glibc sort -n /dev/null
run_record glibc sh -c "'$WORK/musl_prog'; sort -n /dev/null"
[ "$(rc glibc record)" -eq 0 ] || fail "record of a shell running a musl program: $(cat "$WORK/glibc.record.err")"
grep -qx "musl ran; LD_PRELOAD=(unset)" "$WORK/glibc.record.out" ||
  fail "the shell's musl child under record: $(cat "$WORK/glibc.record.out") $(cat "$WORK/glibc.record.err")"
"$PLAN_CHECK" "$WORK/glibc.plan" >/dev/null || fail "the shell's plan is not sound"
"$MEMPLAN" show "$WORK/glibc.plan" >"$WORK/glibc.show"
grep -q "^image: .*/sort " "$WORK/glibc.show" || fail "sort is not in the shell's plan: $(cat "$WORK/glibc.show")"
run direct replay "$MEMPLAN" replay -p "$WORK/glibc.plan" -- "$WORK/musl_prog"
[ "$(rc direct replay)" -eq 0 ] && grep -qx "musl ran; LD_PRELOAD=(unset)" "$WORK/direct.replay.out" &&
  grep -q "musl_prog is run by another C library's loader .*; running it without memplan$" "$WORK/direct.replay.err" ||
  fail "replay of a musl program: status $(rc direct replay): $(cat "$WORK/direct.replay.out" "$WORK/direct.replay.err")"
run strict replay "$MEMPLAN" replay --strict -p "$WORK/glibc.plan" -- "$WORK/musl_prog"
[ "$(rc strict replay)" -eq 1 ] || fail "replay --strict of a musl program: status $(rc strict replay)"
run_replay glibc sh -c "'$WORK/musl_prog'; sort -n /dev/null"
[ "$(rc glibc replay)" -eq 0 ] && grep -qx "musl ran; LD_PRELOAD=(unset)" "$WORK/glibc.replay.out" ||
  fail "the shell's musl child under replay: $(cat "$WORK/glibc.replay.out" "$WORK/glibc.replay.err")"
# In the raw form, through every way a process starts another, with another
# library preloaded beside memplan's (one of no C library, which either loader
# loads): the child keeps that one.
echo 'int preloaded_beside = 1;' >"$WORK/beside.c"
cc -shared -nostdlib -fPIC -o "$WORK/libbeside.so" "$WORK/beside.c"
cat >"$WORK/spawns.py" <<'PY'
import os, subprocess, sys
prog = sys.argv[1]
subprocess.run([prog], check=True)
os.waitpid(os.posix_spawn(prog, [prog], os.environ), 0)
os.environ["PATH"] = os.path.dirname(prog) + ":" + os.environ["PATH"]
os.waitpid(os.posix_spawnp(os.path.basename(prog), [prog], os.environ), 0)
sys.stdout.flush()
os.execv(prog, [prog])
PY
LD_PRELOAD="$LIB $WORK/libbeside.so" MEMPLAN_MODE=replay \
  MEMPLAN_PLAN="$WORK/glibc.plan" python3 "$WORK/spawns.py" "$WORK/musl_prog" >"$WORK/raw.out" 2>"$WORK/raw.err" ||
  fail "raw form: the script failed: $(cat "$WORK/raw.err")"
[ "$(grep -cx "musl ran; LD_PRELOAD=$WORK/libbeside.so" "$WORK/raw.out")" -eq 4 ] ||
  fail "raw form: $(cat "$WORK/raw.out" "$WORK/raw.err")"
echo "programs of another C library run as they would alone: ok"
