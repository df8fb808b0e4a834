# Shared helpers of the tools tests, sourced by each: a work directory removed
# at exit, fail, and status (a command's exit status, output kept).
set -euo pipefail
: "${MEMPLAN:?MEMPLAN must name the memplan CLI}"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

# status EXPECTED CMD...: runs CMD (stdout to $WORK/out, stderr to $WORK/err)
# and checks its exit status.
status() {
  local want=$1 got; shift
  set +e; "$@" >"$WORK/out" 2>"$WORK/err"; got=$?; set -e
  [ "$got" = "$want" ] || fail "exit $got, not $want: $* ($(head -c 400 "$WORK/err"))"
}
