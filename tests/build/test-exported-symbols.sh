#!/usr/bin/env bash
# The dynamic symbols libmemplan.so defines are exactly the global names of its
# version script: nothing of memplan's own leaks into the host program. And
# libmemplan-record.so, which libmemplan.so opens to record, defines only the
# table it is called through (record_module.h).
set -euo pipefail
nm=$1 lib=$2 map=$3 module=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
"$nm" -D --defined-only "$lib" | awk '{ print $3 }' | sed 's/@.*//' | sort -u >exported.txt
sed -n '/global:/,/local:/p' "$map" | grep -v -e global: -e local: | tr ';' '\n' |
  tr -d ' \t' | grep -v '^$' | sort -u >expected.txt
if ! diff -u expected.txt exported.txt; then
  echo "FAIL: exported symbols differ from $map" >&2
  exit 1
fi
echo "$(wc -l <exported.txt) symbols exported, as listed"
"$nm" -D --defined-only "$module" | awk '{ print $3 }' >module.txt
if ! echo memplan_record_module | diff -u - module.txt; then
  echo "FAIL: $module defines more than its table" >&2
  exit 1
fi
echo "the record module defines its table only"
