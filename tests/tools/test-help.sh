#!/usr/bin/env bash
# Help as users expect it: every option each command's parser accepts (long and
# short, read from its source) is described in its --help, with defaults and an
# example, in the man page and in docs/usage.md, as is every environment
# variable memplan reads (and in memplan.h, those users set for the library);
# memplan help CMD is CMD --help; -V and --version name the version and the
# git revision; the man page renders, and meson install puts it where man
# finds it, with the bash completion, which parses and completes commands and
# options.
. "$(dirname "$0")/lib.sh"
: "${SOURCE_DIR:?}" "${BUILD_DIR:?}"
root=$SOURCE_DIR/../..
command -v man >/dev/null || { echo "SKIP: man is not installed"; exit 77; }

MANWIDTH=100 man --warnings -l "$root/docs/memplan.1" >"$WORK/man.txt" 2>"$WORK/man.err" ||
  fail "man -l docs/memplan.1 failed: $(cat "$WORK/man.err")"
[ ! -s "$WORK/man.err" ] || fail "the man page has warnings: $(cat "$WORK/man.err")"
grep -q '^NAME' "$WORK/man.txt" && grep -q '^ENVIRONMENT' "$WORK/man.txt" || fail "man page: $(head "$WORK/man.txt")"

status 0 "$MEMPLAN" --help
commands=$(awk '/^commands:/ { on = 1; next } on && /^$/ { exit } on { print $1 }' "$WORK/out")
[ "$(echo $commands)" = "record replay show plan diff check" ] || fail "commands: $commands"
for cmd in $commands; do
  src=$root/tools/cmd_$cmd.c
  status 0 "$MEMPLAN" "$cmd" --help
  cp "$WORK/out" "$WORK/$cmd.help"
  status 0 "$MEMPLAN" help "$cmd"
  cmp -s "$WORK/out" "$WORK/$cmd.help" || fail "memplan help $cmd is not memplan $cmd --help"
  # The parser's long options: the names in its struct option table.
  longs=$(sed -n 's/^[[:space:]]*{"\([a-z][a-z-]*\)", *\(no\|required\|optional\)_argument.*/\1/p' "$src")
  [ -n "$longs" ] || fail "$cmd: no options found in $src"
  # Its short options: the letters of cli_getopt's option string.
  shorts=$(sed -n 's/.*cli_getopt(argc, argv, "+\{0,1\}\([a-zA-Z:]*\)".*/\1/p' "$src" | tr -d ':' | fold -w1)
  [ -n "$shorts" ] || fail "$cmd: no option string found in $src"
  for o in $longs; do
    grep -Eq -- "(^|[ ,])--$o([ ,=]|$)" "$WORK/$cmd.help" || fail "$cmd --help does not describe --$o"
    grep -q -- "--$o" "$WORK/man.txt" || fail "the man page does not describe $cmd --$o"
    # docs/usage.md too, which writes --output as -o.
    case $o in help | output) ;; *)
      grep -q -- "--$o" "$root/docs/usage.md" || fail "docs/usage.md does not describe $cmd --$o"
    esac
  done
  for o in $shorts; do
    grep -Eq -- "(^| )-$o," "$WORK/$cmd.help" || fail "$cmd --help does not describe -$o"
  done
  grep -q "default" "$WORK/$cmd.help" || fail "$cmd --help gives no defaults"
  grep -Eq "^  memplan $cmd " "$WORK/$cmd.help" || fail "$cmd --help gives no example"
  grep -q "^   memplan $cmd" "$WORK/man.txt" || fail "the man page has no section on $cmd"
  echo "$cmd: $(echo $longs | wc -w) long options, $(echo $shorts | wc -w) short, all described"
done
# Every variable the library or the command reads is in docs/usage.md's table
# of them and in the man page.
vars=$(grep -rho 'getenv("MEMPLAN_[A-Z_]*")' "$root/src" "$root/tools" | sed 's/getenv("\(.*\)")/\1/' | sort -u)
[ -n "$vars" ] || fail "no environment variables found in the sources"
for v in $vars; do
  grep -q "^| \`$v\` |" "$root/docs/usage.md" || fail "docs/usage.md does not describe $v"
  grep -qx "\.B $v" "$root/docs/memplan.1" || fail "the man page does not describe $v"
done
# The public header names those of the library that users set (not those
# memplan sets for child processes): it states the environment contract.
for v in $(grep -rho 'getenv("MEMPLAN_[A-Z_]*")' "$root/src" | sed 's/getenv("\(.*\)")/\1/' | sort -u); do
  grep -q "^| \`$v\` | set by " "$root/docs/usage.md" ||
    grep -qx "#define MEMPLAN_ENV_${v#MEMPLAN_} \"$v\"" "$root/include/memplan.h" ||
    fail "include/memplan.h does not name $v"
done
status 2 "$MEMPLAN" help no-such-command
# One command too many is said as such, not as a command that does not exist.
status 2 "$MEMPLAN" help record extra
grep -qx "memplan: help: unexpected argument 'extra' (one command expected)" "$WORK/err" ||
  fail "help record extra: $(cat "$WORK/err")"

version=$(sed -n "s/^project('memplan', 'c',\$//p; s/^  version: '\\([^']*\\)',\$/\\1/p" "$root/meson.build")
for flag in -V --version; do
  status 2 "$MEMPLAN" $flag extra
  status 0 "$MEMPLAN" $flag
  grep -Eq "^memplan $version \\(git [0-9a-f]{7,}(-dirty)?\\)$|^memplan $version \\(git unknown\\)$" "$WORK/out" ||
    fail "$flag: $(cat "$WORK/out")"
done
if git -C "$root" rev-parse HEAD >/dev/null 2>&1; then
  rev=$(sed 's/.*(git \([0-9a-f]*\).*/\1/' "$WORK/out")
  git -C "$root" rev-parse HEAD | grep -q "^$rev" || fail "--version names $rev, not HEAD"
fi
echo "version: $(cat "$WORK/out")"

# meson install to a prefix under a destination directory: man finds the page
# there, and the completion is where bash-completion looks.
meson install -C "$BUILD_DIR" --no-rebuild --quiet --destdir "$WORK/dest" >"$WORK/install.log" 2>&1 ||
  fail "meson install: $(tail -5 "$WORK/install.log")"
manpage=$(find "$WORK/dest" -path '*/share/man/man1/memplan.1*' | head -n 1)
[ -n "$manpage" ] || fail "meson install put no memplan.1 under share/man/man1"
MANWIDTH=100 man -M "${manpage%/man1/*}" memplan >"$WORK/installed.txt" 2>&1 ||
  fail "man memplan with the installed page: $(head -3 "$WORK/installed.txt")"
cmp -s "$WORK/installed.txt" "$WORK/man.txt" || fail "the installed man page differs"
# Its raw-form example names the library where a default install (prefix
# /usr/local) puts it.
lib=$(find "$WORK/dest" -name libmemplan.so -printf '/%P\n' | head -n 1)
[ -n "$lib" ] || fail "meson install put no libmemplan.so"
case $lib in /usr/local/*)
  grep -q "LD_PRELOAD=$lib " "$WORK/man.txt" || fail "the man page's example does not name $lib"
esac
completion=$(find "$WORK/dest" -path '*/share/bash-completion/completions/memplan' | head -n 1)
[ -n "$completion" ] || fail "meson install put no bash completion"
bash -n "$completion" || fail "the completion file does not parse"
complete() { # WORDS...: the completions of the last word
  PATH=$(dirname "$MEMPLAN"):$PATH bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
    _memplan; printf "%s\n" "${COMPREPLY[@]}"' _ "$completion" "$@" | sort -u | tr '\n' ' '
}
[ "$(complete memplan re)" = "record replay " ] || fail "completion of 're': $(complete memplan re)"
[ "$(complete memplan replay --st)" = "--stats --strict " ] || fail "completion of 'replay --st': $(complete memplan replay --st)"
# Only the options of the help's options section: not --test-input, a word
# of record's example that belongs to the command it runs.
[ "$(complete memplan record --)" = "--depth --help --output --plan-seconds --wait-left " ] ||
  fail "completion of 'record --': $(complete memplan record --)"
[ "$(complete memplan help sh)" = "show " ] || fail "completion of 'help sh': $(complete memplan help sh)"
echo "help, man page and completion: ok"
