#!/usr/bin/env bash
# CPython's own tests of the things a preloaded allocator can disturb: a child's
# descriptors (test_subprocess's pass_fds and close_fds tests), crashes handled
# on a small alternate signal stack (test_faulthandler), limits and file locks
# (test_resource, test_fcntl). Run plainly, under record and under replay, they
# must end the same: the same tests run, skipped and failed. Each of the first
# two failed under memplan before (descriptors 1008 and 1009 in the child;
# "malloc(): unsorted double linked list corrupted" after a crash).
. "$(dirname "$0")/lib.sh"
python=/usr/bin/python3
[ -x "$python" ] && "$python" -c 'import test.test_faulthandler' 2>/dev/null ||
  { echo "SKIP: $python has no test suite (Debian: libpython3.11-testsuite)"; exit 77; }

# summary MODE: each test and how it ended, then the result, without timings.
summary() {
  grep -E ' \.\.\. ' "$WORK/cpython.$1.out" | sort
  grep -E '^Tests result:' "$WORK/cpython.$1.out"
}

files=(test_faulthandler test_resource test_fcntl test_subprocess)
only=(-m '*test_faulthandler.*' -m '*test_resource.*' -m '*test_fcntl.*'
  -m '*pass_fds*' -m '*close_fds*')
args=(-m test -j0 -v --randseed 7 "${only[@]}" "${files[@]}")
run_plain cpython "$python" "${args[@]}"
ran=$(summary plain | grep -c ' \.\.\. ok$') || true
[ "$ran" -ge 50 ] || fail "the plain run passed $ran tests: $(tail -5 "$WORK/cpython.plain.out")"
run_record cpython "$python" "${args[@]}"
run_replay cpython "$python" "${args[@]}"
for mode in record replay; do
  [ "$(cat "$WORK/cpython.$mode.rc")" = "$(cat "$WORK/cpython.plain.rc")" ] ||
    fail "$mode: status $(cat "$WORK/cpython.$mode.rc"), plain $(cat "$WORK/cpython.plain.rc"): $(tail -20 "$WORK/cpython.$mode.out")"
  diff <(summary plain) <(summary "$mode") >"$WORK/diff.$mode" ||
    fail "$mode ended otherwise than the plain run: $(cat "$WORK/diff.$mode"; grep -B2 -A12 '^FAIL\|^ERROR' "$WORK/cpython.$mode.out" | head -40)"
done
hit_ratio_at_least cpython 90
echo "CPython's tests: $ran passed plainly, and every test ended the same under record and replay"
