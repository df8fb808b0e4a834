#!/usr/bin/env bash
# The memplan CLI: exit codes (2 usage, 1 failure, else the command's status),
# stdout of the command untouched, messages in the "memplan: FILE: problem" form,
# and the JSON keys of `memplan show --json` that scripts rely on.
. "$(dirname "$0")/lib.sh"
: "${PROGRAMS:?}" "${PRELOAD_LIB:?}"

# Usage errors: exit 2 with a usage line.
status 2 "$MEMPLAN"
status 2 "$MEMPLAN" frobnicate
status 2 "$MEMPLAN" record -- true
status 2 "$MEMPLAN" record -o "$WORK/x.plan"
status 2 "$MEMPLAN" record -o "$WORK/x.plan" --depth 0 -- true
# An empty path is no file: a usage error, as a missing one.
status 2 "$MEMPLAN" record -o '' -- true
status 2 "$MEMPLAN" replay -p '' -- true
# help of help is memplan's; --help takes nothing more.
status 0 "$MEMPLAN" help --help
status 2 "$MEMPLAN" --help extra
# Seconds are plain decimal numbers, as every number memplan reads.
for seconds in 1e1 0x10 -1 ' 2'; do
  status 2 "$MEMPLAN" record -o "$WORK/x.plan" --wait-left "$seconds" -- true
  status 2 "$MEMPLAN" record -o "$WORK/x.plan" --plan-seconds "$seconds" -- true
done
status 2 "$MEMPLAN" record -o "$WORK/x.plan" --depth many -- true
# A value left out before "--" is no value of "--": nothing is written to a
# file of that name.
while read -r option command; do
  (cd "$WORK" && status 2 "$MEMPLAN" $command)
  grep -qx "memplan ${command%% *}: option '$option' needs a value, not '--'" "$WORK/err" ||
    fail "$command: $(cat "$WORK/err")"
done <<EOF
-o record -o -- true
--output record --output=-- -- true
-d record -o x.plan -d -- true
--plan-seconds record -o x.plan --plan-seconds -- true
--wait-left record -o x.plan --wait-left -- true
-p replay -p -- true
--stats replay -p x.plan --stats -- true
--min-hit-rate replay -p x.plan --min-hit-rate -- true
--csv plan --csv --
-o plan x.plan -o --
--time-limit plan x.plan --time-limit --
--capacity plan --csv x.csv --capacity --
--threads plan x.plan --threads --
--top show --top -- x.plan
--exe show --exe -- x.plan
--top diff --top -- a.plan b.plan
--baseline check --baseline -- x.plan
--max-growth check --max-growth -- x.plan
--max-peak check --max-peak -- x.plan
--max-allocs check --max-allocs -- x.plan
--min-hit-rate check --min-hit-rate -- x.plan
--stats check --stats -- x.plan
EOF
[ ! -e "$WORK/--" ] || fail "a value of -- made a file of that name"
# A plan is binary: -o - is no stdout for it, nor a file named -.
(cd "$WORK" && status 2 "$MEMPLAN" record -o - -- true)
grep -qx "memplan: record: a plan is binary and goes to a file, not to stdout (-o -)" "$WORK/err" ||
  fail "record -o -: $(cat "$WORK/err")"
[ ! -e "$WORK/-" ] || fail "record -o - wrote a file named -"
status 2 "$MEMPLAN" replay -- true
# Percentages are digits with an optional fraction: not strtod's hexadecimal
# or exponents, which the byte counts already refuse.
for pct in 0x20 1e1 inf -0; do
  status 2 "$MEMPLAN" replay -p "$WORK/x.plan" --min-hit-rate $pct -- true
done
# The plan given where its option belongs, as `record -o` and `replay -p`
# differ: the usage error names the option to put before it.
status 2 "$MEMPLAN" replay app.plan -- true
grep -q "^memplan: replay: -p PLAN is required (did you mean -p app.plan?)$" "$WORK/err" ||
  fail "replay app.plan: $(cat "$WORK/err")"
status 2 "$MEMPLAN" record app.plan -- true
grep -q "^memplan: record: -o PLAN is required (did you mean -o app.plan?)$" "$WORK/err" ||
  fail "record app.plan: $(cat "$WORK/err")"
status 2 "$MEMPLAN" show
status 2 "$MEMPLAN" show a b
status 2 "$MEMPLAN" show --svg --json a.plan
grep -q "^memplan: show: --json and --svg exclude each other$" "$WORK/err" || fail "show --svg --json: $(cat "$WORK/err")"
status 2 "$MEMPLAN" plan
grep -q usage "$WORK/err" || fail "no usage line for a usage error"
status 0 "$MEMPLAN" --help
status 0 "$MEMPLAN" record --help

# Failures: exit 1 with "memplan: FILE: ...".
status 1 "$MEMPLAN" record -o "$WORK/no/such/dir/x.plan" -- true
grep -q "^memplan: $WORK/no/such/dir/x.plan: cannot write here" "$WORK/err" || fail "record: $(cat "$WORK/err")"
# -o naming a file that is not a plan (`-o app` typed for `-o app.plan`, the
# program itself) is refused before the command runs, and the file is kept;
# an empty file or a torn plan is replaced. (Once: the program was
# overwritten by its own plan.)
cp "$(command -v sort)" "$WORK/sort-copy"
cp "$WORK/sort-copy" "$WORK/sort-kept"
status 1 "$MEMPLAN" record -o "$WORK/sort-copy" -- "$WORK/sort-copy" /dev/null
grep -q "^memplan: $WORK/sort-copy: exists and is not a plan" "$WORK/err" &&
  cmp -s "$WORK/sort-copy" "$WORK/sort-kept" || fail "record -o over a program: $(cat "$WORK/err")"
: >"$WORK/empty.plan"
status 0 "$MEMPLAN" record -o "$WORK/empty.plan" -- sort /dev/null
printf 'MEMP' >"$WORK/torn.plan"
status 0 "$MEMPLAN" record -o "$WORK/torn.plan" -- sort /dev/null
status 0 "$MEMPLAN" show "$WORK/torn.plan"
status 1 "$MEMPLAN" plan "$WORK/torn.plan" -o "$WORK/sort-copy"
grep -q "^memplan: $WORK/sort-copy: exists and is not a plan" "$WORK/err" &&
  cmp -s "$WORK/sort-copy" "$WORK/sort-kept" || fail "plan -o over a program: $(cat "$WORK/err")"
# In the raw form too: the process runs unrecorded, saying why.
LD_PRELOAD="$PRELOAD_LIB" MEMPLAN_MODE=record MEMPLAN_PLAN="$WORK/sort-copy" sort /dev/null 2>"$WORK/err" ||
  fail "raw record over a program: the command failed"
grep -q "^memplan: $WORK/sort-copy: exists and is not a plan, .*; not recording$" "$WORK/err" &&
  cmp -s "$WORK/sort-copy" "$WORK/sort-kept" || fail "raw record over a program: $(cat "$WORK/err")"
status 1 "$MEMPLAN" show "$WORK/missing.plan"
grep -q "^memplan: $WORK/missing.plan: No such file" "$WORK/err" || fail "show: $(cat "$WORK/err")"
head -c 100 /dev/urandom >"$WORK/junk.plan"
status 1 "$MEMPLAN" show "$WORK/junk.plan"
grep -q "^memplan: $WORK/junk.plan: not a memplan plan file" "$WORK/err" || fail "show junk: $(cat "$WORK/err")"

# The options decide, not the raw form's variables in the user's environment:
# a bad MEMPLAN_DEPTH is not read, and --depth's default holds.
MEMPLAN_DEPTH=abc MEMPLAN_PLAN_SECONDS=x status 0 "$MEMPLAN" record -o "$WORK/env.plan" -- sort /dev/null
[ ! -s "$WORK/err" ] || fail "record read the environment's MEMPLAN_DEPTH: $(cat "$WORK/err")"
status 0 "$MEMPLAN" show "$WORK/env.plan"
grep -q "^  call sites: .*(depth 6)" "$WORK/out" || fail "record's default depth: $(grep 'call sites' "$WORK/out")"
MEMPLAN_PREFAULT=maybe status 0 "$MEMPLAN" replay -p "$WORK/env.plan" -- sort /dev/null
grep -q PREFAULT "$WORK/err" && fail "replay read the environment's MEMPLAN_PREFAULT: $(cat "$WORK/err")"

MEMPLAN_PRELOAD="$WORK/no/libmemplan.so" status 1 "$MEMPLAN" replay -p "$WORK/env.plan" -- true
grep -q "no/libmemplan.so: preload library not found (as MEMPLAN_PRELOAD names it)" "$WORK/err" ||
  fail "a missing MEMPLAN_PRELOAD: $(cat "$WORK/err")"
# Nor does a recording that stops there leave a statistics file behind.
mkdir "$WORK/tmpdir"
TMPDIR="$WORK/tmpdir" MEMPLAN_PRELOAD="$WORK/no/libmemplan.so" status 1 "$MEMPLAN" record -o "$WORK/np.plan" -- true
[ -z "$(ls -A "$WORK/tmpdir")" ] || fail "a missing library left: $(ls -A "$WORK/tmpdir")"

# --stats -: the lines go to memplan's standard output after the command's
# own, whole, and check reads them from its standard input. (With
# --stats /dev/stdout, a file there lost the line's first bytes to the
# program's last write.)
status 0 "$MEMPLAN" replay -q -p "$WORK/env.plan" --stats - -- sort "$WORK/env.plan"
sort "$WORK/env.plan" >"$WORK/sorted.plain"
head -c "$(stat -c %s "$WORK/sorted.plain")" "$WORK/out" | cmp -s - "$WORK/sorted.plain" ||
  fail "replay --stats -: the command's output changed"
tail -n 1 "$WORK/out" | grep -q '^{"exe":"/usr/bin/sort",.*"allocs":[1-9]' ||
  fail "replay --stats -: no statistics line after the output: $(tail -c 300 "$WORK/out")"
cp "$WORK/out" "$WORK/stats-stdout"
status 0 sh -c "'$MEMPLAN' check '$WORK/env.plan' --min-hit-rate 50 --stats - <'$WORK/stats-stdout'"
grep -q "^OK " "$WORK/out" || fail "check --stats -: $(cat "$WORK/out" "$WORK/err")"
# After output that does not end with a newline (a compressor's, printf abc),
# the first line is glued to its last bytes; the output is left as it was, and
# check reads the line all the same. (Once, it skipped it: "FAIL ... 0.00%".)
status 0 "$MEMPLAN" replay -q -p "$WORK/env.plan" --stats - -- \
  sh -c 'printf abc; sort "$1" >/dev/null' sh "$WORK/env.plan"
head -c 11 "$WORK/out" | grep -qx 'abc{"exe":"' ||
  fail "replay --stats - after abc: $(head -c 100 "$WORK/out")"
cp "$WORK/out" "$WORK/stats-glued"
status 0 sh -c "'$MEMPLAN' check '$WORK/env.plan' --min-hit-rate 50 --stats - <'$WORK/stats-glued'"
grep -q "^OK " "$WORK/out" || fail "check --stats - after abc: $(cat "$WORK/out" "$WORK/err")"
# Only a whole object to the end of the line counts: not one cut short, nor
# garbage after it.
sed 's/^abc\({"exe":"[^"]*sort".*\)}$/abc\1/' "$WORK/stats-glued" >"$WORK/stats-cut"
sed 's/^abc\({"exe":"[^"]*sort".*}\)$/abc\1x/' "$WORK/stats-glued" >"$WORK/stats-trail"
for f in stats-cut stats-trail; do
  ! cmp -s "$WORK/$f" "$WORK/stats-glued" || fail "$f: the test's edit did not apply"
  status 1 sh -c "'$MEMPLAN' check '$WORK/env.plan' --min-hit-rate 50 --stats - <'$WORK/$f'"
done

# A reader that closed the pipe (memplan show PLAN | head -1) ends memplan
# quietly, as SIGPIPE ends git log there: status 141 (or killed by SIGPIPE),
# nothing on stderr, whether memplan's parent ignored SIGPIPE or not. (Once:
# "memplan: cannot write the output", exit 1.) A write that fails otherwise
# (/dev/full) is still said in one line; replay keeps the command's status.
python3 -S - "$MEMPLAN" "$WORK/env.plan" "$MEMPLAN_DSA_DIR/input.12.csv" >"$WORK/out" 2>"$WORK/err" <<'PY' ||
import os, signal, subprocess, sys
memplan, plan, csv = sys.argv[1:]
commands = [["show", "--top", "all", plan], ["show", "--json", plan], ["show", "--svg", plan],
            ["diff", plan, plan], ["check", plan, "--max-allocs", "1000000000"],
            ["plan", "--csv", csv, "-o", "-"],
            ["replay", "-q", "-p", plan, "--stats", "-", "--", "sort", "/dev/null"]]
for args in commands:
    for default in (True, False):  # SIGPIPE as a shell leaves it; ignored
        r, w = os.pipe()
        os.close(r)
        p = subprocess.run([memplan] + args, stdout=w, stderr=subprocess.PIPE,
                           restore_signals=default)
        os.close(w)
        assert p.returncode in ((141, -signal.SIGPIPE) if default else (141,)) and not p.stderr, \
            (args, default, p.returncode, p.stderr)
    with open("/dev/full", "w") as full:
        p = subprocess.run([memplan] + args, stdout=full, stderr=subprocess.PIPE)
    assert p.returncode == (0 if args[0] == "replay" else 1) and p.stderr.count(b"\n") == 1, \
        (args, "/dev/full", p.returncode, p.stderr)
PY
  fail "a closed standard output: $(cat "$WORK/err")"

# With no descriptor left for the pipe that tells a failed exec (ulimit -n 4),
# the command runs all the same. (Once: "cannot make a pipe", status 127.)
python3 -S - "$MEMPLAN" "$WORK/env.plan" >"$WORK/out" 2>"$WORK/err" <<'PY' || fail "ulimit -n 4: $(cat "$WORK/err")"
import resource, subprocess, sys
limit = lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (4, 4))
r = subprocess.run([sys.argv[1], "replay", "-q", "-p", sys.argv[2], "--", "sh", "-c", "echo ran; exit 3"],
                   preexec_fn=limit, close_fds=True, capture_output=True, text=True)
assert r.returncode == 3 and r.stdout == "ran\n", (r.returncode, r.stdout, r.stderr)
PY

# A soft limit on descriptors is the command's (ulimit -Sn 4): memplan raises
# its own, the command gets 4 back, and its processes write their plans
# with a few more for the moment. Once, the plan was lost ("cannot write the
# plan: Too many open files"). With a hard limit too low for memplan, it says
# so, not "no process wrote a plan" over the plan they wrote.
python3 -S - "$MEMPLAN" "$WORK" "$PROGRAMS/family" >"$WORK/out" 2>"$WORK/err" <<'PY' || fail "descriptor limits: $(cat "$WORK/err")"
import os, resource, subprocess, sys
memplan, work, family = sys.argv[1:]
hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
def run(plan, soft, hard):
    limit = lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    cmd = [memplan, "record", "-o", plan, "--", "sh", "-c", f"ulimit -Sn; exec {family} 1"]
    return subprocess.run(cmd, preexec_fn=limit, close_fds=True, capture_output=True, text=True)
r = run(f"{work}/soft.plan", 4, hard)
assert r.returncode == 0 and r.stdout.startswith("4\nok ") and r.stderr == "", ("soft", r)
show = subprocess.run([memplan, "show", f"{work}/soft.plan"], capture_output=True, text=True).stdout
assert show.count("symbols:      stored") == 2, ("soft: symbols", show)
r = run(f"{work}/hard.plan", 5, 5)
assert r.returncode == 0 and os.path.exists(f"{work}/hard.plan"), ("hard", r)
assert "no process wrote a plan" not in r.stderr and "Too many open files" in r.stderr, ("hard", r)
PY

# Under a small stack limit, reading the symbols (libdw recurses deeply) runs
# on a stack of its own: memplan once crashed there once the command had ended,
# and lost its status.
set +e
(ulimit -s 128; "$MEMPLAN" record -o "$WORK/small-stack.plan" -- sh -c "'$PROGRAMS/family' 1 >/dev/null; exit 3") \
  >/dev/null 2>"$WORK/err"
rc=$?
set -e
[ "$rc" -eq 3 ] || fail "record under ulimit -s 128: status $rc: $(cat "$WORK/err")"
(ulimit -s 64; "$MEMPLAN" show "$WORK/small-stack.plan" >"$WORK/out" 2>"$WORK/err") ||
  fail "show under ulimit -s 64: $(cat "$WORK/err")"
grep -q "in family" "$WORK/out" || fail "show under ulimit -s 64: no symbols: $(head -c 400 "$WORK/out")"

# A command that drops its privileges (a daemon started as root that becomes
# another user) still writes its statistics to memplan's temporary file,
# which is in a directory of its own that others may enter but not list.
# (Once the file was root's alone: no line, and --strict failed the run.)
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && id nobody >/dev/null 2>&1; then
  chmod o+x "$WORK"
  mkdir -m 1777 "$WORK/shared-tmp"
  TMPDIR="$WORK/shared-tmp" status 0 "$MEMPLAN" replay --strict -p "$WORK/env.plan" -- \
    setpriv --reuid=nobody --regid=nogroup --clear-groups sort /dev/null
  grep -q "^memplan replay: .* by 2 process images" "$WORK/err" ||
    fail "dropped privileges: $(cat "$WORK/err")"
  [ -z "$(ls -A "$WORK/shared-tmp")" ] || fail "dropped privileges: left $(ls -A "$WORK/shared-tmp")"
fi

# record and replay pass the command's status and output through untouched.
status 5 "$MEMPLAN" record -o "$WORK/exit.plan" -- "$PROGRAMS/exit_paths" _Exit
[ ! -s "$WORK/out" ] && [ ! -s "$WORK/err" ] || fail "record printed something"
status 3 "$MEMPLAN" replay -p "$WORK/exit.plan" -- "$PROGRAMS/exit_paths" exit
status 134 "$MEMPLAN" record -o "$WORK/abort.plan" -- "$PROGRAMS/exit_paths" abort
status 127 "$MEMPLAN" record -o "$WORK/x.plan" -- "$WORK/not-a-command"
# Found but not runnable: 126, as a shell says, in one line (no word of a plan).
status 126 "$MEMPLAN" record -o "$WORK/x.plan" -- /etc/passwd
[ "$(cat "$WORK/err")" = "memplan: /etc/passwd: Permission denied" ] ||
  fail "record of a file that is no program: $(cat "$WORK/err")"
status 126 "$MEMPLAN" replay -p "$WORK/x.plan" -- /etc/passwd
# A FIFO is no program either: 126 at once, where an open of it waited for a
# writer for good.
mkfifo "$WORK/fifo"
chmod +x "$WORK/fifo"
status 126 timeout 20 "$MEMPLAN" record -o "$WORK/x.plan" -- "$WORK/fifo"
[ "$(cat "$WORK/err")" = "memplan: $WORK/fifo: Permission denied" ] ||
  fail "record of a FIFO: $(cat "$WORK/err")"
status 126 timeout 20 "$MEMPLAN" replay -p "$WORK/x.plan" -- "$WORK/fifo"
# A path or argument with control characters (a newline, an escape sequence)
# is printed escaped: the report keeps its lines, the terminal its state.
# The program's own file name is its call sites' module name.
odd_dir="$WORK/odd"$'\n\e[2J'
mkdir "$odd_dir"
cp "$PROGRAMS/family" "$odd_dir/fam"$'\e'"ily"
status 0 "$MEMPLAN" record -o "$WORK/odd.plan" -- "$odd_dir/fam"$'\e'"ily" 1
status 0 "$MEMPLAN" show "$WORK/odd.plan"
grep -qF "image: $WORK/odd\n\x1b[2J/fam\x1bily (pid" "$WORK/out" || fail "show of an odd path: $(cat -A "$WORK/out")"
grep -qF ' in fam\x1bily' "$WORK/out" || fail "show of an odd module: $(cat -A "$WORK/out")"
! grep -q $'\e' "$WORK/out" || fail "show wrote an escape character"
# A byte that starts no UTF-8 sequence (0x9b is CSI to a Latin-1 terminal,
# 0xff nothing at all) is escaped too; UTF-8 (é, and U+009B encoded) as ever.
status 0 "$MEMPLAN" record -o "$WORK/bytes.plan" -- "$PROGRAMS/family" 1 $'\x9b31mX\xff' $'caf\xc3\xa9\xc2\x9b'
status 0 "$MEMPLAN" show "$WORK/bytes.plan"
grep -qF 'family 1 \x9b31mX\xff café\x9b' "$WORK/out" || fail "show of stray bytes: $(cat -A "$WORK/out")"
# So is the plan's own path, in reports and in messages.
odd_plan="$odd_dir/a"$'\t.plan'
cp "$WORK/odd.plan" "$odd_plan"
odd_name="$WORK/odd\n\x1b[2J/a\t.plan"
status 0 "$MEMPLAN" show "$odd_plan"
grep -qF "plan: $odd_name (1 process image" "$WORK/out" || fail "show of an odd plan path: $(cat -A "$WORK/out")"
status 0 "$MEMPLAN" diff "$odd_plan" "$odd_plan"
grep -qxF "memplan diff: $odd_name -> $odd_name" "$WORK/out" || fail "diff of an odd plan path: $(cat -A "$WORK/out")"
status 0 "$MEMPLAN" check "$odd_plan" --baseline "$odd_plan" --max-growth 0
grep -qF "OK $odd_name: within" "$WORK/out" || fail "check of an odd plan path: $(cat -A "$WORK/out")"
status 0 "$MEMPLAN" plan "$odd_plan" -o "$odd_plan"
grep -qF "memplan: $odd_name: 1 process image" "$WORK/err" || fail "plan of an odd plan path: $(cat -A "$WORK/err")"
for cmd in "show" "diff $WORK/odd.plan" "check --max-peak 0" "plan -o $WORK/x.plan" "show --svg"; do
  status 1 "$MEMPLAN" $cmd "$odd_plan.gone"
  [ "$(cat "$WORK/err")" = "memplan: $odd_name.gone: No such file or directory" ] ||
    fail "$cmd of a missing odd plan path: $(cat -A "$WORK/err")"
done
status 1 "$MEMPLAN" check "$odd_plan" --min-hit-rate 1 --stats "$odd_plan.gone"
[ "$(cat "$WORK/err")" = "memplan: $odd_name.gone: No such file or directory" ] ||
  fail "check of missing odd statistics: $(cat -A "$WORK/err")"
# -o through a symbolic link (a chain, a relative one) writes the file it
# names, as > does; the links stay links.
mkdir "$WORK/plans"
ln -s plans/current.plan "$WORK/link.plan"
ln -s link.plan "$WORK/link2.plan"
status 0 "$MEMPLAN" record -o "$WORK/link2.plan" -- "$PROGRAMS/family" 1
[ -L "$WORK/link.plan" ] && [ -L "$WORK/link2.plan" ] || fail "record replaced a link"
[ -f "$WORK/plans/current.plan" ] || fail "record did not write through the links"
status 0 "$MEMPLAN" plan "$WORK/plans/current.plan" -o "$WORK/link.plan" --time-limit 0
[ -L "$WORK/link.plan" ] || fail "plan -o replaced a link"
status 0 "$MEMPLAN" show "$WORK/plans/current.plan"
"$PROGRAMS/family" 2 >"$WORK/family.plain"
status 0 "$MEMPLAN" record -o "$WORK/family.plan" --depth 3 -- "$PROGRAMS/family" 2
cmp -s "$WORK/out" "$WORK/family.plain" || fail "record changed the command's stdout"
status 0 "$MEMPLAN" replay -p "$WORK/family.plan" --stats "$WORK/s.jsonl" -- "$PROGRAMS/family" 2
cmp -s "$WORK/out" "$WORK/family.plain" || fail "replay changed the command's stdout"
# One line on stderr sums the replay up, and names the program.
[ "$(grep -c . "$WORK/err")" = 1 ] &&
  grep -Eq '^memplan replay: [0-9.]+% of [0-9,]+ allocations served from the arena \(family, arena [0-9.]+ [KM]?i?B\)$' "$WORK/err" ||
  fail "replay's summary: $(cat "$WORK/err")"
status 0 "$MEMPLAN" replay -q -p "$WORK/family.plan" -- "$PROGRAMS/family" 2
[ ! -s "$WORK/err" ] || fail "replay --quiet printed on stderr: $(cat "$WORK/err")"

# With its stderr a pipe whose reader is gone (`2>&1 | head -1`), memplan's
# own lines fail to be written instead of killing it: the command's status
# still comes through, and record, which says it waits for a job the command
# left running, goes on to finish the plan (its symbols stored).
closed_stderr() {
  python3 -S -c '
import os, subprocess, sys
r, w = os.pipe()
os.close(r)
print(subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=w).returncode)' "$@"
}
[ "$(closed_stderr "$MEMPLAN" replay -p "$WORK/family.plan" -- "$PROGRAMS/family" 2)" = 0 ] ||
  fail "replay with a closed stderr did not pass the command's status on"
[ "$(closed_stderr "$MEMPLAN" record -w 5 -o "$WORK/left.plan" -- \
  sh -c "sleep 1 >/dev/null 2>&1 & $PROGRAMS/family 2 >/dev/null")" = 0 ] ||
  fail "record with a closed stderr did not pass the command's status on"
status 0 "$MEMPLAN" show "$WORK/left.plan"
grep -q "symbols: *stored in the plan" "$WORK/out" ||
  fail "record with a closed stderr did not finish the plan: $(cat "$WORK/out")"

# memplan runs under the LD_PRELOAD given to the command: one that freezes
# the clock (libfaketime) must not make its wait for a job left running
# endless. --wait-left 1, and the job sleeps 20 s.
faketime_lib=/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1
[ -f "$faketime_lib" ] || fail "libfaketime not installed (scripts/install-deps.sh installs faketime)"
status 0 timeout 15 env LD_PRELOAD="$faketime_lib" FAKETIME="2020-01-01 00:00:00" \
  "$MEMPLAN" record -w 1 -o "$WORK/frozen.plan" -- sh -c "sleep 20 >/dev/null 2>&1 & $PROGRAMS/family 2"
grep -q "pid [0-9]* sleep, left running by sh, goes on" "$WORK/err" ||
  fail "record under a frozen clock: $(cat "$WORK/err")"

# A TMPDIR that cannot hold the statistics' temporary file (missing) leaves
# /tmp, without a word: replay sums the run up and --strict judges it as
# ever, and record says nothing.
status 0 env TMPDIR="$WORK/nonexistent" "$MEMPLAN" replay --strict -p "$WORK/family.plan" -- "$PROGRAMS/family" 2
cmp -s "$WORK/out" "$WORK/family.plain" || fail "replay with a missing TMPDIR changed the output"
[ "$(grep -c . "$WORK/err")" = 1 ] && grep -q "^memplan replay: .* (family, arena" "$WORK/err" ||
  fail "replay with a missing TMPDIR: $(cat "$WORK/err")"
status 0 env TMPDIR="$WORK/nonexistent" "$MEMPLAN" record -o "$WORK/tmpdir.plan" -- "$PROGRAMS/family" 2
[ ! -s "$WORK/err" ] && [ -s "$WORK/tmpdir.plan" ] || fail "record with a missing TMPDIR: $(cat "$WORK/err")"

# A statically linked command (Debian's ldconfig, found through PATH): the
# preload library never runs in it. record and replay say why, in one line,
# and pass its status through.
status 0 env PATH="/usr/sbin:/sbin:$PATH" "$MEMPLAN" record -o "$WORK/static.plan" -- ldconfig -p
grep -q "^memplan: $WORK/static.plan: no process wrote a plan: ldconfig is statically linked" \
  "$WORK/err" || fail "record of a static command: $(cat "$WORK/err")"
[ ! -e "$WORK/static.plan" ] || fail "a static command left a plan"
# A plan already there is kept, and record says so, lest it be taken for this
# recording's; the status is still the command's.
cp "$WORK/family.plan" "$WORK/kept.plan"
status 0 "$MEMPLAN" record -o "$WORK/kept.plan" -- /sbin/ldconfig -p
grep -q "statically linked.*; the plan already there is left as it was$" "$WORK/err" ||
  fail "record over an old plan, writing none: $(cat "$WORK/err")"
cmp -s "$WORK/family.plan" "$WORK/kept.plan" || fail "record that wrote no plan changed the old one"
status 64 "$MEMPLAN" record -o "$WORK/kept.plan" -- /sbin/ldconfig --no-such-option
status 0 "$MEMPLAN" replay -p "$WORK/family.plan" -- /sbin/ldconfig -p
[ "$(grep -c "^memplan: /sbin/ldconfig is statically linked" "$WORK/err")" = 1 ] ||
  fail "replay of a static command: $(cat "$WORK/err")"

# A program set-user-ID to another user (root runs one owned by nobody) runs
# in the loader's secure mode, which ignores LD_PRELOAD: said as for a static
# one. Only as root, and where the file system honours the bit.
if [ "$(id -u)" = 0 ] && [[ ",$(findmnt -no OPTIONS -T "$WORK")," != *,nosuid,* ]]; then
  cp "$PROGRAMS/family" "$WORK/setuid-family"
  chown nobody "$WORK/setuid-family"
  chmod u+s "$WORK/setuid-family"
  status 0 "$MEMPLAN" record -o "$WORK/setuid.plan" -- "$WORK/setuid-family" 2
  grep -q "no process wrote a plan: .*setuid-family is set-user-ID or set-group-ID, and the loader ignores LD_PRELOAD" \
    "$WORK/err" || fail "record of a set-user-ID command: $(cat "$WORK/err")"
  status 0 "$MEMPLAN" replay -p "$WORK/family.plan" -- "$WORK/setuid-family" 2
  cmp -s "$WORK/out" "$WORK/family.plain" || fail "replay changed a set-user-ID command's stdout"
  [ "$(grep -c "setuid-family is set-user-ID or set-group-ID (the loader ignores LD_PRELOAD)" "$WORK/err")" = 1 ] ||
    fail "replay of a set-user-ID command: $(cat "$WORK/err")"
fi

# The stats line and show --json carry the contract keys.
python3 -S - "$WORK/s.jsonl" <<'PY'
import json, sys
line = json.loads(open(sys.argv[1]).readline())
for key in ("exe", "pid", "allocs", "planned", "hits", "hit_bytes", "misses", "arena_bytes"):
    assert key in line, key
assert isinstance(line["misses"], dict) and line["hits"] > 0
PY
# docs/usage.md describes every key of the line (and every reason of misses).
python3 -S - "$WORK/s.jsonl" "$(dirname "$0")/../../docs/usage.md" <<'PY'
import json, sys
line = json.loads(open(sys.argv[1]).readline())
doc = open(sys.argv[2]).read()
missing = [k for k in list(line) + list(line["misses"]) if "`%s`" % k not in doc]
assert not missing, "not in docs/usage.md: %s" % missing
PY
status 0 "$MEMPLAN" show --json "$WORK/family.plan"
python3 -S - "$WORK/out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for key in ("allocations", "arena_bytes", "lower_bound_bytes", "sites", "images"):
    assert key in d, key
im = d["images"][0]
for key in ("exe", "allocations", "arena_bytes", "lower_bound_bytes", "sites", "top_sites"):
    assert key in im, key
assert im["depth"] == 3
# 64-bit identifiers as hex strings: a number above 2^53 reads rounded in jq 1.6.
import re
for v in (d["record_id"], im["exe_key"], im["args_key"]):
    assert isinstance(v, str) and re.fullmatch("[0-9a-f]{16}", v), v
assert d["arena_bytes"] >= d["lower_bound_bytes"] > 0
assert d["allocations"] == sum(i["allocations"] for i in d["images"])
assert im["top_sites"] and im["top_sites"][0]["frames"]
PY
# Frames as long as C++ template names are shown whole, in text and JSON, up
# to 4 KiB; one longer still ends in "..." where it was cut.
if command -v cc >/dev/null; then
  name1=f$(printf '%1500s' | tr ' ' a) name2=g$(printf '%5000s' | tr ' ' b)
  cat >"$WORK/long_name.c" <<EOF
#include <stdlib.h>
__attribute__((noinline)) void *$name1(size_t n) { return malloc(n); }
__attribute__((noinline)) void *$name2(size_t n) { return malloc(n); }
int main(void) { void *volatile a = $name1(100), *volatile b = $name2(200); free(a); free(b); return 0; }
EOF
  cc -O0 -g -o "$WORK/long_name" "$WORK/long_name.c"
  status 0 "$MEMPLAN" record -o "$WORK/long_name.plan" -- "$WORK/long_name"
  status 0 "$MEMPLAN" show "$WORK/long_name.plan"
  grep -q " $name1 (.*long_name.c:2) in long_name\$" "$WORK/out" || fail "show cut a frame of 1.5 KiB"
  grep -q " ${name2:0:4000}b*\.\.\.\$" "$WORK/out" || fail "show cut a frame of 5 KiB with no mark"
  status 0 "$MEMPLAN" show --json "$WORK/long_name.plan"
  python3 -S - "$WORK/out" "$name1" <<'PY'
import json, sys
frames = [s["frames"][0] for s in json.load(open(sys.argv[1]))["images"][0]["top_sites"]]
assert any(f.startswith(sys.argv[2] + " (") and f.endswith("long_name.c:2) in long_name") for f in frames), frames
assert any(f.startswith("gbbb") and f.endswith("b...") and len(f) < 4096 for f in frames), frames
PY
fi
# A path that is not UTF-8 (a Latin-1 file name) still gives valid JSON, in the
# statistics and in show --json.
mkdir "$WORK/caf$(printf '\xe9')-$(printf '\xff')"
bad_exe="$WORK/caf$(printf '\xe9')-$(printf '\xff')/family"
cp "$PROGRAMS/family" "$bad_exe"
status 0 "$MEMPLAN" record -o "$WORK/latin1.plan" -- "$bad_exe" 1
status 0 "$MEMPLAN" replay -p "$WORK/latin1.plan" --stats "$WORK/latin1.jsonl" -- "$bad_exe" 1
status 0 "$MEMPLAN" show --json "$WORK/latin1.plan"
python3 -S - "$WORK/latin1.jsonl" "$WORK/out" <<'PY'
import json, sys
stats = json.loads(open(sys.argv[1], encoding="utf-8").readline())
show = json.load(open(sys.argv[2], encoding="utf-8"))
for exe in (stats["exe"], show["images"][0]["exe"]):
    assert exe.endswith("/caf\u00e9-\u00ff/family"), exe
PY
# A long path of such bytes, each escaped to six in the line: the line is
# written all the same (the path cut in the middle, "..." where it was cut, its
# file name kept), --strict judges a run fully served as one, and the summary
# names the program by its file name.
name=$(printf '\xe9%.0s' $(seq 1 250))
long_dir="$WORK/long/$name/$name/$name/$name/$name/$name"
mkdir -p "$long_dir"
cp "$PROGRAMS/family" "$long_dir/"
( cd "$long_dir" && status 0 "$MEMPLAN" record -o "$WORK/long.plan" -- ./family 1 )
grep -q "cannot write statistics" "$WORK/err" && fail "long path, record: $(cat "$WORK/err")"
( cd "$long_dir" && status 0 "$MEMPLAN" replay -p "$WORK/long.plan" --strict --stats "$WORK/long.jsonl" -- ./family 1 )
grep -q "^memplan replay: [0-9.]*% of [0-9]* allocations served from the arena (family, arena" "$WORK/err" ||
  fail "long path, replay: $(cat "$WORK/err")"
python3 -S - "$WORK/long.jsonl" "$long_dir" <<'PY' || fail "long path: the statistics line"
import json, sys
text = open(sys.argv[1], encoding="utf-8").read()
assert text.count("\n") == 1 and len(text) <= 8192, len(text)
line = json.loads(text)
exe = line["exe"]
full = sys.argv[2].encode("utf-8", "surrogateescape").decode("latin-1") + "/family"
head, _, tail = exe.partition("...")
assert tail and full.startswith(head) and full.endswith(tail), exe
assert tail.endswith("/" + "\u00e9" * 250 + "/family") and len(exe) < len(full), exe
assert line["allocs"] > 0 and line["hits"] > 0 and line["exe_in_plan"], line
PY
# A plan at such a path is cut in the line as exe is: check cuts its own path
# alike to find the lines of its replays.
( cd "$long_dir" && status 0 "$MEMPLAN" record -o family.plan -- ./family 1 &&
  status 0 "$MEMPLAN" replay -p family.plan --stats "$WORK/long-plan.jsonl" -- ./family 1 &&
  status 0 "$MEMPLAN" check family.plan --min-hit-rate 50 --stats "$WORK/long-plan.jsonl" )
grep -q '"plan":"[^"]*\.\.\.' "$WORK/long-plan.jsonl" || fail "long plan path: not cut in the line"
# Several images in one plan: images[] has each, totals add up.
status 0 "$MEMPLAN" record -o "$WORK/multi.plan" -- sh -c "'$PROGRAMS/family' 1 >/dev/null; '$PROGRAMS/exit_paths' return"
status 0 "$MEMPLAN" show --json "$WORK/multi.plan"
python3 -S -c '
import json, sys
d = json.load(open(sys.argv[1]))
names = sorted(i["exe"].rsplit("/", 1)[-1] for i in d["images"])
assert "family" in names and "exit_paths" in names, names
assert d["arena_bytes"] == sum(i["arena_bytes"] for i in d["images"])
' "$WORK/out"
status 0 "$MEMPLAN" show "$WORK/multi.plan"
grep -q "lower bound:" "$WORK/out" || fail "show text has no lower bound"
grep -q "top call sites" "$WORK/out" || fail "show text has no top call sites"
# --top 0 lists no call sites: no table for them either.
status 0 "$MEMPLAN" show --top 0 "$WORK/multi.plan"
grep -q "lower bound:" "$WORK/out" && ! grep -q "top call sites" "$WORK/out" ||
  fail "show --top 0: $(cat "$WORK/out")"
# An image that allocated nothing has no ratio to its lower bound, nor a share
# of its arena.
status 0 "$MEMPLAN" record -o "$WORK/none.plan" -- true
status 0 "$MEMPLAN" show "$WORK/none.plan"
grep -q "^  allocations:  0 recorded" "$WORK/out" || fail "true allocated: $(cat "$WORK/out")"
grep -qx "  lower bound:  0 B (most bytes live at once)" "$WORK/out" &&
  grep -qx "  steady state: 0 pools of 0 slots, 0 B; exact entries in the rest" "$WORK/out" ||
  fail "show of an image without allocations: $(cat "$WORK/out")"
# A recording keeps the first 32 KiB of the arguments: show marks the cut.
status 0 "$MEMPLAN" record -o "$WORK/long.plan" -- true $(seq 1 9000)
status 0 "$MEMPLAN" show "$WORK/long.plan"
grep -Eq '^  command:      true 1 2 3 .* [0-9]+ ?\.\.\.$' "$WORK/out" ||
  fail "show of a command cut by the recording: $(cut -c 1-100 "$WORK/out")"
# Re-planning a plan of several images says so in one line, not one per image.
status 0 "$MEMPLAN" plan "$WORK/multi.plan" -o "$WORK/multi2.plan" --time-limit 1
[ "$(grep -c . "$WORK/err")" = 1 ] && grep -q "multi.plan: [0-9]* process images, .*arena .* -> .* bytes" \
  "$WORK/err" || fail "plan of a multi-image plan: $(cat "$WORK/err")"
# Re-planning a recorded plan: never larger, still valid, still replays.
status 0 "$MEMPLAN" record -o "$WORK/threads.plan" -- "$PROGRAMS/pattern_threads" 1 30000
status 0 "$MEMPLAN" plan "$WORK/threads.plan" -o "$WORK/threads2.plan" --time-limit 2
grep -q "arena .* -> .* bytes" "$WORK/err" || fail "plan PLAN printed no figures: $(cat "$WORK/err")"
status 0 "$MEMPLAN" show --json "$WORK/threads.plan"
before=$(python3 -S -c 'import json,sys; print(json.load(sys.stdin)["arena_bytes"])' <"$WORK/out")
status 0 "$MEMPLAN" show --json "$WORK/threads2.plan"
after=$(python3 -S -c 'import json,sys; print(json.load(sys.stdin)["arena_bytes"])' <"$WORK/out")
[ "$after" -le "$before" ] || fail "re-planning made the arena larger: $before -> $after"
"$PROGRAMS/pattern_threads" 1 30000 >"$WORK/threads.plain"
status 0 "$MEMPLAN" replay -p "$WORK/threads2.plan" --stats "$WORK/t.jsonl" -- "$PROGRAMS/pattern_threads" 1 30000
cmp -s "$WORK/out" "$WORK/threads.plain" || fail "the re-planned plan changed the output"
# An output that is a pipe (or a device: /dev/null) is written in place, not
# replaced by a file renamed over it. (A FIFO of our own: a regression must not
# replace the machine's /dev/null.)
printf 'id,lower,upper,size\n1,0,2,16\n2,1,3,32\n3,2,4,16\n' >"$WORK/small.csv"
status 0 "$MEMPLAN" plan --csv "$WORK/small.csv"
mv "$WORK/out" "$WORK/small.planned"
mkfifo "$WORK/planned.fifo"
exec 3<>"$WORK/planned.fifo" # a reader, so that the write does not wait
status 0 "$MEMPLAN" plan --csv "$WORK/small.csv" -o "$WORK/planned.fifo"
[ -p "$WORK/planned.fifo" ] || fail "plan -o FIFO replaced the FIFO by a file"
while IFS= read -r -t 1 line <&3; do echo "$line"; done >"$WORK/piped.planned"
exec 3<&-
cmp -s "$WORK/small.planned" "$WORK/piped.planned" || fail "plan -o FIFO wrote: $(cat "$WORK/piped.planned")"
status 2 "$MEMPLAN" plan "$WORK/threads.plan"
status 1 "$MEMPLAN" plan "$WORK/junk.plan" -o "$WORK/x.plan"

# An image is named by what the user ran, argv[0]'s file name, and by its
# executable's after it where that is another (redis-server, a link to
# redis-check-rdb): in show's table and the replay summary. (Once:
# "other_paths fg 10" for a command typed as link-to-paths.) One run by its
# own name keeps its name alone.
ln -s "$PROGRAMS/other_paths" "$WORK/link-to-paths"
two="'$WORK/link-to-paths' fg 10 && '$PROGRAMS/other_paths' gf 10"
status 0 "$MEMPLAN" record -o "$WORK/link.plan" -- sh -c "$two"
status 0 "$MEMPLAN" show "$WORK/link.plan"
grep -Eq '^ .* [0-9]+ link-to-paths \(other_paths\) fg 10$' "$WORK/out" &&
  grep -Eq '^ .* [0-9]+ other_paths gf 10$' "$WORK/out" || fail "show of a link: $(cat "$WORK/out")"
status 0 "$MEMPLAN" replay -p "$WORK/link.plan" --stats "$WORK/link.jsonl" -- "$WORK/link-to-paths" new 10
grep -q '^memplan replay: .* (link-to-paths (other_paths), arena .*; for other arguments: link-to-paths (other_paths) [0-9.]*% ' "$WORK/err" &&
  grep -q '^{"exe":"[^"]*/other_paths","argv0":"link-to-paths",' "$WORK/link.jsonl" ||
  fail "replay of a link: $(cat "$WORK/err" "$WORK/link.jsonl")"
status 0 "$MEMPLAN" replay -p "$WORK/link.plan" --stats "$WORK/own.jsonl" -- "$PROGRAMS/other_paths" new 10
grep -q '^memplan replay: .* (other_paths, arena ' "$WORK/err" && ! grep -q argv0 "$WORK/own.jsonl" ||
  fail "replay by its own name: $(cat "$WORK/err" "$WORK/own.jsonl")"
echo "cli: ok"
