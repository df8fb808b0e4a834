#!/usr/bin/env bash
# A program built with AddressSanitizer refuses to start after a preloaded
# library ("ASan runtime does not come first"), and one built with
# ThreadSanitizer would no longer see the blocks memplan served. memplan
# record says so and records nothing (status 1); memplan replay says so and
# runs the program without memplan, with its sanitizer (under --strict, status
# 1). Both used to run them preloaded: the ASan build failed to start.
. "$(dirname "$0")/lib.sh"
: "${PROGRAMS:?PROGRAMS must name the test programs}"

"$MEMPLAN" record -o "$WORK/plain.plan" -- "$PROGRAMS/steady_loop" 200 >"$WORK/plain.out" ||
  fail "steady_loop failed under record"
tested=0
for san in asan tsan; do
  prog="$PROGRAMS/steady_loop_$san"
  [ -x "$prog" ] || continue
  tested=$((tested + 1))
  "$prog" 200 >"$WORK/$san.plain" || fail "$san: the program failed on its own"
  cmp -s "$WORK/plain.out" "$WORK/$san.plain" || fail "$san: other output than the plain build"

  status 1 "$MEMPLAN" record -o "$WORK/$san.plan" -- "$prog" 200
  grep -q "steady_loop_$san is built with a sanitizer (lib.*san" "$WORK/err" ||
    fail "$san: record did not say why: $(head -c 300 "$WORK/err")"
  [ ! -s "$WORK/out" ] || fail "$san: record ran the program"
  [ ! -e "$WORK/$san.plan" ] || fail "$san: record wrote a plan"

  status 0 "$MEMPLAN" replay -p "$WORK/plain.plan" -- "$prog" 200
  cmp -s "$WORK/$san.plain" "$WORK/out" || fail "$san: replay changed the output"
  grep -q "running it without memplan" "$WORK/err" ||
    fail "$san: replay did not say why: $(head -c 300 "$WORK/err")"
  ! grep -q "Sanitizer\|ASan" "$WORK/err" || fail "$san: the sanitizer complained: $(head -c 300 "$WORK/err")"
  status 1 "$MEMPLAN" replay --strict -p "$WORK/plain.plan" -- "$prog" 200
done
[ "$tested" -gt 0 ] || { echo "SKIP: the compiler has no sanitizer runtimes"; exit 77; }
echo "sanitized builds: $tested refused by record, run on their own by replay"
