#!/usr/bin/env bash
# Installs what memplan needs, from Debian's packages:
#   scripts/install-deps.sh           the build, and what the tests and benchmarks run
#   scripts/install-deps.sh --build   the build only (what `meson setup` checks for)
#   scripts/install-deps.sh --demo    what scripts/demo.sh needs: the build, and time(1)
# Only installs what is missing, so a second run is quick and needs no network.
set -euo pipefail

build=(
  meson ninja-build pkg-config gcc   # gcc's libgcc: _Unwind_Backtrace, for call sites
  uthash-dev      # hash tables for sites, allocating through libc
  libdw-dev       # symbolising frames (memplan record stores them, show and diff print them)
  g++             # its libstdc++-dev: __cxa_demangle, for C++ names
  libxxhash-dev   # checksums and call-site hashes
)
demo=(
  time            # /usr/bin/time: peak RSS in the demo
)
tests=(
  clang           # libFuzzer, for scripts/fuzz.sh
  chromium        # renders `memplan show --svg` output in its test
  man-db          # `man -l` reads the man page in its test
  # Real programs the tests run under record and replay:
  sqlite3 jq perl gzip git python3 binutils make xz-utils nodejs
  php-cli         # opens its extensions with RTLD_DEEPBIND
  valgrind        # its memcheck replaces the allocator, its callgrind does not
  libpython3.11-testsuite  # CPython's own tests, run under record and replay
  bind9-utils     # named-checkzone, linked with jemalloc: an allocator after memplan's
  strace          # which files memplan record opens (no debuginfod client)
  faketime        # a frozen clock in LD_PRELOAD, which memplan's own waits ignore
  musl-tools      # a program of another C library, which memplan must let run
)

case "${1:-}" in
  --build) packages=("${build[@]}") ;;
  --demo) packages=("${build[@]}" "${demo[@]}") ;;
  "") packages=("${build[@]}" "${demo[@]}" "${tests[@]}") ;;
  *) echo "usage: scripts/install-deps.sh [--build | --demo]" >&2; exit 2 ;;
esac

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
