#!/usr/bin/env bash
# A library opened with RTLD_DEEPBIND binds malloc and free to libc, past the
# preloaded memplan: it must still free, realloc and measure the program's
# blocks from the arena, and the program its blocks (deepbind.h). Replay used
# to abort in glibc's free. Opened by path and by a bare name found along the
# host's RUNPATH, with lazy and immediate binding; then PHP, whose Debian build
# opens its extensions so (jemalloc, mimalloc and tcmalloc all crash it).
. "$(dirname "$0")/lib.sh"

host="$PROGRAMS/deepbind_host"
for lib in "$PROGRAMS/deepbind_lib.so" deepbind_lib.so; do
  for binding in lazy now; do
    name=$(basename "$lib" .so)-$binding
    [ "${lib#/}" != "$lib" ] || name=bare-$name
    run_plain "$name" "$host" "$lib" "$binding"
    grep -q '^checksum ' "$WORK/$name.plain.out" || fail "$name: the host failed on its own"
    run_record "$name" "$host" "$lib" "$binding"
    same_as_plain "$name" record
    run_replay "$name" "$host" "$lib" "$binding"
    same_as_plain "$name" replay
    same_stderr_as_plain "$name" replay
    # The library's own allocations count too: rebound, they reach memplan.
    hit_ratio_at_least "$name" 99
  done
done

if command -v php >/dev/null; then
  # Into a file first: with pipefail, grep -q ending before php has written
  # everything would fail the pipeline with php's SIGPIPE.
  php -m >"$WORK/php-modules" || fail "php -m failed"
  grep -qx PDO "$WORK/php-modules" || fail "php has no PDO module: nothing opened with RTLD_DEEPBIND"
  script='$a = []; for ($i = 0; $i < 100000; $i++) { $a["k" . ($i % 3001)] = ($a["k" . ($i % 3001)] ?? 0) + $i; } echo count($a), " ", $a["k7"], "\n";'
  run_plain php php -r "$script"
  run_record php php -r "$script"
  same_as_plain php record
  run_replay php php -r "$script"
  same_as_plain php replay
  same_stderr_as_plain php replay
  hit_ratio_at_least php 95
else
  echo "php not installed: its case skipped"
fi
echo "libraries bound with RTLD_DEEPBIND share blocks with the program under record and replay"
