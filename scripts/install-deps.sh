#!/usr/bin/env bash
# Installs what building and testing memplan needs, from Debian's packages.
# Only installs what is missing, so a second run is quick and needs no network.
set -euo pipefail

packages=(
  meson ninja-build pkg-config gcc
  libunwind-dev   # call-site unwinding (unw_backtrace and its per-thread cache)
  uthash-dev      # hash tables for sites, allocating through libc
  libdw-dev       # symbolising frames (memplan record stores them, show and diff print them)
  g++             # its libstdc++-dev: __cxa_demangle, for C++ names
  libxxhash-dev   # checksums and call-site hashes
  time            # /usr/bin/time: peak RSS in the demo
  clang           # libFuzzer, for scripts/fuzz.sh
  chromium        # renders `memplan show --svg` output in its test
  procps util-linux  # pgrep, flock, mount, setsid: the fault suite's signals, locks and a full disk
  # Real programs the tests run under record and replay:
  sqlite3 jq perl gzip git python3 binutils make xz-utils nodejs
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
