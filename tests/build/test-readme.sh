#!/usr/bin/env bash
# The README stays a page for users: at most 300 lines, the two commands a
# fresh machine needs, no commit hashes (history lives in docs/), every term it
# promises defined, and every link into the tree pointing at a file there.
set -euo pipefail
root=$1
readme=$root/README.md
fail() { echo "FAIL: $*" >&2; exit 1; }

lines=$(wc -l <"$readme")
[ "$lines" -le 300 ] || fail "README.md has $lines lines"
grep -q '^scripts/demo.sh ' "$readme" && grep -q '^scripts/test.sh ' "$readme" ||
  fail "README.md does not show scripts/demo.sh and scripts/test.sh"
if grep -Eon '\b[0-9a-f]{7,40}\b' "$readme" | grep '[a-f]' | grep '[0-9]'; then
  fail "README.md names commits"
fi
for term in "Lower bound" "Process image" "Occurrence" "Granule" "Steady state"; do
  grep -q "^- \*\*$term" "$readme" || fail "README.md does not define '$term'"
done
for link in $(grep -o '](docs/[^)]*)' "$readme" | sed 's/^](//; s/)$//' | sort -u); do
  [ -f "$root/$link" ] || fail "README.md links to $link, which does not exist"
done
echo "README.md: $lines lines, ok"
