#!/usr/bin/env bash
# Where memplan record finds a program's separate debug information: through
# its .gnu_debuglink, next to it or in its .debug/, as a developer's build
# leaves it (objcopy --only-keep-debug), if the file there has the program's
# build-id; a debug file of another build is not used. (By build-id under
# /usr/lib/debug/.build-id/, Debian's -dbg packages, is libdw's own lookup.)
# No server is asked, and libdebuginfod is never loaded.
. "$(dirname "$0")/lib.sh"
for p in gcc objcopy strace; do
  command -v "$p" >/dev/null || { echo "SKIP: $p not installed"; exit 77; }
done
cd "$WORK"
cat >app.c <<'C'
#include <stdio.h>
#include <stdlib.h>
__attribute__((noinline)) char *make_buf(int n) { char *p = malloc(n); p[0] = 1; return p; }
int main(void)
{
	long t = 0;
	for (int i = 0; i < 100; i++) {
		char *p = make_buf(64 + i);
		t += p[0];
		free(p);
	}
	printf("%ld\n", t);
	return 0;
}
C
gcc -g -O1 -o app app.c
# With no debug information anywhere: ELF names, and no server library loaded
# to look for more.
objcopy --strip-debug app bare
strace -f -e trace=openat -o trace.txt "$MEMPLAN" record -o bare.plan -- ./bare >/dev/null
! grep -q "libdebuginfod" trace.txt || fail "libdebuginfod was loaded"
status 0 "$MEMPLAN" show bare.plan
grep -q "make_buf in bare" out || fail "no debug information: $(grep make_buf out)"

objcopy --only-keep-debug app app.debug
objcopy --strip-debug --add-gnu-debuglink=app.debug app

status 0 "$MEMPLAN" record -o next.plan -- ./app
status 0 "$MEMPLAN" show next.plan
grep -q "make_buf (.*app\.c:[0-9]*) in app" out || fail "next to it: $(grep make_buf out)"

mkdir .debug
mv app.debug .debug/
strace -f -e trace=openat -o trace.txt "$MEMPLAN" record -o sub.plan -- ./app >/dev/null
status 0 "$MEMPLAN" show sub.plan
grep -q "make_buf (.*app\.c:[0-9]*) in app" out || fail "in .debug/: $(grep make_buf out)"
! grep -q "libdebuginfod" trace.txt || fail "libdebuginfod was loaded"

# Another build's debug file under the same name: names from the ELF symbols
# only, no file or line from it.
sed -i 's/p\[0\] = 1/p[0] = 2/' app.c
gcc -g -O1 -o other app.c
objcopy --only-keep-debug other .debug/app.debug
status 0 "$MEMPLAN" record -o other.plan -- ./app
status 0 "$MEMPLAN" show other.plan
grep -q "make_buf in app" out || fail "another build's debug file: $(grep make_buf out)"
echo "ok"
