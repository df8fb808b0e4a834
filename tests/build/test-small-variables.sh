#!/usr/bin/env bash
# memplan's small variables share a page or two (big_bss.h): no variable of a
# KiB or more lies among them in .data or .bss, where each page it spreads them
# over costs every process a page fault and 4 KiB at start-up. Such an array is
# marked BIG_BSS.
set -euo pipefail
nm=$1 readelf=$2 lib=$3
section() { # prints the start and end of section $1, in hex, or nothing
  "$readelf" -SW "$lib" | awk -v name="$1" '
    { for (i = 1; i <= NF; i++) if ($i == name) { printf "%s %s\n", $(i + 2), $(i + 4); exit } }'
}
read -r data_start data_size < <(section .data)
read -r bss_start bss_size < <(section .bss)
lo=$((16#$data_start)) hi=$((16#$bss_start + 16#$bss_size))
big=
while read -r at size type name; do
  case $type in b | B | d | D) ;; *) continue ;; esac
  if [ $((16#$at)) -ge "$lo" ] && [ $((16#$at)) -lt "$hi" ] && [ $((16#$size)) -ge 1024 ]; then
    big+="$name ($((16#$size)) bytes)"$'\n'
  fi
done < <("$nm" -S "$lib" | awk 'NF == 4')
if [ -n "$big" ]; then
  echo "FAIL: big variables among the small ones (mark them BIG_BSS):" >&2
  printf '%s' "$big" >&2
  exit 1
fi
small=$((hi - lo))
if [ "$small" -gt 8192 ]; then
  echo "FAIL: the small variables take $small bytes, more than two pages" >&2
  exit 1
fi
echo "small variables: $small bytes (.data and .bss), no array of a KiB or more among them"
