#!/usr/bin/env bash
# What a plan costs a replayed process's memory: of the plan's tables it keeps
# only the page of the header resident, however many images the plan has (a
# shell script records one per command and arguments), whether the process
# finds its own image by its arguments or compares those of every image of its
# executable for the nearest. Each image's record (304 bytes) once stayed
# resident in every process: 92 KiB here.
. "$(dirname "$0")/lib.sh"
need cat

LIB=$(dirname "$(dirname "$MEMPLAN")")/src/preload/libmemplan.so
[ -f "$LIB" ] || fail "libmemplan.so not found next to the CLI"
IMAGES=300
for i in $(seq 1 $IMAGES); do echo "line $i" >"$WORK/f$i"; done
cat >"$WORK/many.sh" <<EOF
for i in \$(seq 1 $IMAGES); do cat "$WORK/f\$i" /proc/self/smaps >/dev/null; done
EOF
"$MEMPLAN" record -o "$WORK/many.plan" -- sh "$WORK/many.sh" >"$WORK/many.out" 2>"$WORK/many.err" ||
  fail "record failed: $(cat "$WORK/many.err")"
cats=$("$MEMPLAN" show --json "$WORK/many.plan" | grep -o '"exe": *"[^"]*/cat"' | grep -c .) ||
  true
[ "$cats" -ge $IMAGES ] || fail "the plan has $cats images of cat, expected $IMAGES"
plan_bytes=$(stat -c %s "$WORK/many.plan")
buffer_kib=$(((plan_bytes + 4095) / 4096 * 4))

# resident NAME ARGS...: KiB resident of the plan's buffer (an anonymous
# mapping of the plan's size) in cat ARGS, replayed, which prints its smaps.
resident() {
  local name=$1; shift
  rm -f "$WORK/$name.stats"
  MEMPLAN_MODE=replay MEMPLAN_PLAN="$WORK/many.plan" MEMPLAN_STATS="$WORK/$name.stats" \
    LD_PRELOAD="$LIB" cat "$@" /proc/self/smaps >"$WORK/$name.smaps" ||
    fail "$name: cat failed under replay"
  local line size=-1 rss=""
  while read -r line; do
    if [[ $line =~ ^([0-9a-f]+)-([0-9a-f]+)\ rw-p\ 00000000\ 00:00\ 0\ *$ ]]; then
      size=$(((16#${BASH_REMATCH[2]} - 16#${BASH_REMATCH[1]}) / 1024))
    elif [[ $line =~ ^[0-9a-f]+-[0-9a-f]+\  ]]; then
      size=-1
    elif [[ $size -eq $buffer_kib && $line =~ ^Rss:\ +([0-9]+) ]]; then
      rss=${BASH_REMATCH[1]}
    fi
  done <"$WORK/$name.smaps"
  [ -n "$rss" ] || fail "$name: no mapping of $buffer_kib KiB (the plan's buffer) in cat's smaps"
  grep -q '"hits":[1-9]' "$WORK/$name.stats" ||
    fail "$name: nothing served: $(cat "$WORK/$name.stats")"
  echo "$rss"
}

# The image of the same arguments (the last of the images, the furthest in the
# table), then one of arguments no image has: the nearest of 300.
exact=$(resident exact "$WORK/f$IMAGES")
grep -q '"match":"exact"' "$WORK/exact.stats" || fail "exact: $(cat "$WORK/exact.stats")"
nearest=$(resident nearest "$WORK/f7" "$WORK/f8")
grep -q '"match":"same_exe"' "$WORK/nearest.stats" || fail "nearest: $(cat "$WORK/nearest.stats")"
echo "plan of $IMAGES images of cat, $plan_bytes bytes: resident of its buffer" \
  "$exact KiB (exact image), $nearest KiB (nearest of $IMAGES)"
[ "$exact" -le 4 ] || fail "exact: $exact KiB of the plan's buffer resident, expected the header's page"
[ "$nearest" -le 4 ] ||
  fail "nearest: $nearest KiB of the plan's buffer resident, expected the header's page"

# A freed block of 32 MiB or more gives its pages back, as glibc unmaps one
# of its own: sort --parallel on a bigger input than recorded once kept its
# freed 50 MB buffer resident in the arena beside the bigger ones libc then
# gave it (1.9 times a plain run's peak).
run_record giveback "$PROGRAMS/give_back" 40
run_plain giveback "$PROGRAMS/give_back" 40
run_replay giveback "$PROGRAMS/give_back" 40
same_as_plain giveback replay
grep -qx "pages given back: yes" "$WORK/giveback.plain.out" ||
  fail "giveback: glibc kept the pages: $(cat "$WORK/giveback.plain.out")"
[ "$(stat_sum giveback hits)" -ge 1 ] || fail "giveback: the block was not served from the arena"
