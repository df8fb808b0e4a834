#!/usr/bin/env bash
# A plan carries the frame sizes its recording's stack walks learned, and replay
# walks stacks from them instead of unwinding each new one with libgcc's
# unwinder. Real programs, replayed on their recorded input: output identical,
# as many allocations served, and far fewer unwinds (the replay statistics'
# `unwinds`) than a replay of the same plan without its frame sizes; sqlite3,
# whose stacks all name sites of its plan, none at all. And a longer run on
# another input, whose new stacks meet frames the recording never saw (which
# replay takes as naming no site, unwinding nothing), is served as much as
# without the frame sizes. And a replay whose walks can name every site of its
# plan does not load libgcc's unwinder at all, until a dlclose unloads a
# module (which makes it forget every size): then it does, and goes on
# serving.
. "$(dirname "$0")/lib.sh"
need sqlite3 perl python3 jq

{
  echo "CREATE TABLE t(id INTEGER PRIMARY KEY, k INTEGER, v TEXT);"
  awk 'BEGIN { for (i = 0; i < 3000; i++) printf "INSERT INTO t(k, v) VALUES (%d, \"v%d\");\n", i % 97, i }'
  echo "SELECT k, count(*), max(v) FROM t GROUP BY k ORDER BY k LIMIT 5;"
} >"$WORK/script.sql"
export PERL_HASH_SEED=0

# replay_counting NAME CMD...: replays, checks the output, and sets served and
# unwound from the statistics.
replay_counting() {
  local name=$1; shift
  run_replay "$name" "$@"
  same_as_plain "$name" replay
  no_memplan_messages "$name" replay
  served=$(stat_sum "$name" hits)
  unwound=$(stat_sum "$name" unwinds)
  unknown=$(stat_sum "$name" misses.unknown_site)
}

check() {
  local name=$1; shift
  run_plain "$name" "$@"
  run_record "$name" "$@"
  same_as_plain "$name" record
  local sizes
  sizes=$("$MEMPLAN" show --json "$WORK/$name.plan" |
    python3 -c 'import json,sys; print(sum(i["frame_sizes"] for i in json.load(sys.stdin)["images"]))')
  [ "$sizes" -gt 0 ] || fail "$name: the plan holds no frame sizes"
  cp "$WORK/$name.plan" "$WORK/$name.sized.plan"
  replay_counting "$name" "$@"
  local hits=$served unwinds=$unwound unknown_sized=$unknown
  "$HOSTILE_PLAN" "$WORK/$name.sized.plan" "$WORK/$name.plan" nosizes
  replay_counting "$name" "$@"
  local hits_unsized=$served unwinds_unsized=$unwound
  echo "$name: $sizes frame sizes; replay unwound $unwinds times ($hits served)," \
    "$unwinds_unsized without them ($hits_unsized served)"
  [ "$unwinds_unsized" -gt 0 ] || fail "$name: the replay without frame sizes never unwound"
  [ $((unwinds * 4)) -le "$unwinds_unsized" ] ||
    fail "$name: $unwinds unwinds with the plan's frame sizes, $unwinds_unsized without"
  # Walked or unwound, a stack names the same site: hardly any more of
  # unknown site (python3 through a shell-script shim: 27 against 0, walks
  # that went wrong or found no frame pointer, which without the unwinder no
  # unwind corrects; 160 if the sizes of modules loaded by dlopen were not
  # seeded).
  [ $((hits * 100)) -ge $((hits_unsized * 99)) ] ||
    fail "$name: $hits served with frame sizes, $hits_unsized without"
  [ "$unknown_sized" -le $((unknown + hits / 1000)) ] ||
    fail "$name: $unknown_sized allocations of unknown site with frame sizes, $unknown without"
  sized_unwinds=$unwinds
}

# check_other NAME RECORDED CMD...: replays CMD, another run than RECORDED's,
# with RECORDED's plan, with its frame sizes and without them.
check_other() {
  local name=$1 recorded=$2; shift 2
  run_plain "$name" "$@"
  cp "$WORK/$recorded.sized.plan" "$WORK/$name.plan"
  replay_counting "$name" "$@"
  local hits=$served unwinds=$unwound
  "$HOSTILE_PLAN" "$WORK/$recorded.sized.plan" "$WORK/$name.plan" nosizes
  replay_counting "$name" "$@"
  echo "$name: replay unwound $unwinds times ($hits served), $unwound without" \
    "the frame sizes ($served served)"
  [ $((hits * 100)) -ge $((served * 99)) ] ||
    fail "$name: $hits served with frame sizes, $served without"
  # Its new stacks' frames with no size are not unwound: 18 unwinds against
  # 365 here, and 52 if each new frame were unwound once to learn it.
  [ $((unwinds * 10)) -le "$unwound" ] ||
    fail "$name: $unwinds unwinds with the plan's frame sizes, $unwound without"
}

check sqlite3 sqlite3 :memory: ".read $WORK/script.sql"
[ "$sized_unwinds" -eq 0 ] || fail "sqlite3: its recorded run replayed with $sized_unwinds unwinds"
{
  echo "CREATE TABLE t(id INTEGER PRIMARY KEY, k INTEGER, v TEXT);"
  awk 'BEGIN { for (i = 0; i < 12000; i++) printf "INSERT INTO t(k, v) VALUES (%d, \"w%d\");\n", i % 89, i }'
  echo "CREATE INDEX tk ON t(k);"
  echo "SELECT k, count(*), max(v) FROM t GROUP BY k ORDER BY k LIMIT 5;"
  echo "SELECT group_concat(v, ',') FROM t WHERE k = 7;"
  echo "DELETE FROM t WHERE k % 3 = 0;"
  echo "SELECT count(*), sum(length(v)) FROM t;"
} >"$WORK/longer.sql"
check_other sqlite3-longer sqlite3 sqlite3 :memory: ".read $WORK/longer.sql"
LC_ALL=C.UTF-8 check perl perl -e 'my %h; for my $i (1..50000) { $h{"k" . ($i % 3000)} .= "x" } print scalar(keys %h), "\n"'
# In a UTF-8 locale, perl's setlocale allocates under a frame that alloca
# sizes: walked by its frame pointer.
[ "$sized_unwinds" -eq 0 ] || fail "perl: its recorded run replayed with $sized_unwinds unwinds"
# json's accelerator is an extension module that python3 loads with dlopen:
# its frames' sizes are seeded when it appears.
check python3 python3 -c 'import json; d = [{"a": i, "b": str(i)} for i in range(20000)]; print(len(json.dumps(d)))'
[ "$sized_unwinds" -eq 0 ] || fail "python3: its recorded run replayed with $sized_unwinds unwinds"

# Programs listing their own mappings: the recording loads libgcc_s, whose
# unwinder finds each new stack; the replay, whose plan gives the size of
# every frame its sites' stacks pass through, does not (about 100 KiB of
# resident set). sort in a UTF-8 locale allocates under setlocale's
# _nl_load_locale, whose frame alloca sizes at run time: replay walks it by its
# frame pointer, which the frame below it saved.
# maps_without_unwinder NAME PERCENT CMD...: PERCENT served at least (the
# listing differs from run to run, and so do the allocations).
maps_without_unwinder() {
  local name=$1 pct=$2; shift 2
  run_record "$name" "$@"
  grep -q libgcc_s "$WORK/$name.record.out" || fail "$name: the recording did not load libgcc_s"
  run_replay "$name" "$@"
  no_memplan_messages "$name" replay
  hit_ratio_at_least "$name" "$pct"
  [ "$(stat_sum "$name" unwinds)" -eq 0 ] || fail "$name: the replay unwound $(stat_sum "$name" unwinds) stacks"
  ! grep libgcc_s "$WORK/$name.replay.out" || fail "$name: the replay loaded libgcc_s"
}
maps_without_unwinder jq-maps 99 jq -Rr . /proc/self/maps
LC_ALL=C.UTF-8 maps_without_unwinder sort-maps 90 sort /proc/self/maps
# And on the same input, every allocation of sort's is served: each stack
# through _nl_load_locale's frame is walked, also the one whose caller used
# the frame pointer register for a number (0 for LC_CTYPE).
export LC_ALL=C.UTF-8
run_plain sort-locale sort "$WORK/script.sql"
run_record sort-locale sort "$WORK/script.sql"
run_replay sort-locale sort "$WORK/script.sql"
same_as_plain sort-locale replay
[ "$(stat_sum sort-locale hits)" -eq "$(stat_sum sort-locale allocs)" ] && [ "$(stat_sum sort-locale unwinds)" -eq 0 ] ||
  fail "sort-locale: $(stat_sum sort-locale hits) of $(stat_sum sort-locale allocs) served, $(stat_sum sort-locale unwinds) unwinds"
unset LC_ALL

# A replay that starts without the unwinder opens it when a dlclose unloads a
# module, which makes it forget every frame size: the allocations after the
# unload are served too (with walks alone, none of them were). Recorded
# without the unload, so that the plan keeps every size (a recording forgets
# them too), and replayed with it (the nearest arguments).
P=("$PROGRAMS/unload_between" "$PROGRAMS/plugin.so" 3000)
run_record unload "${P[@]}"
run_plain unload "${P[@]}" unload
run_replay unload "${P[@]}" unload
same_as_plain unload replay
no_memplan_messages unload replay
grep -q '^libgcc_s before the unload: no$' "$WORK/unload.replay.err" ||
  fail "unload: the replay loaded the unwinder before the unload: $(cat "$WORK/unload.replay.err")"
grep -q '^libgcc_s after the unload: yes$' "$WORK/unload.replay.err" ||
  fail "unload: the replay did not load the unwinder at the unload"
hit_ratio_at_least unload 99
echo "unload: $(stat_sum unload hits) of $(stat_sum unload allocs) served ($(stat_sum unload misses.unknown_site) of unknown site), the unwinder opened at the unload"
