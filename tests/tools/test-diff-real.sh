#!/usr/bin/env bash
# memplan diff on programs nobody here wrote: sqlite3 with a larger PRAGMA
# cache_size grows at its page cache, and diff says so; gcc -c recorded twice
# gives matching images (its driver, cc1 and as) despite its temporary files.
. "$(dirname "$0")/lib.sh"
for p in sqlite3 gcc python3; do
  command -v $p >/dev/null || { echo "SKIP: $p not installed"; exit 77; }
done

# script PAGES: a script that fills a database of about 480 pages through a
# page cache of PAGES pages.
script() {
  echo "PRAGMA cache_size=$1;"
  echo "CREATE TABLE t(id INTEGER PRIMARY KEY, k INTEGER, v TEXT);"
  echo "BEGIN;"
  awk 'BEGIN { for (i = 0; i < 20000; i++) printf "INSERT INTO t(k, v) VALUES (%d, \"v%d-%070d\");\n", (i * 7919) % 1000, i, i }'
  echo "COMMIT;"
  echo "SELECT count(*), sum(length(v)) FROM t;"
}
# One database file and one script name, so that both runs have the same
# arguments, as a CI job's two runs do.
for pages in 100 2000; do
  script $pages >"$WORK/script.sql"
  rm -f "$WORK/db.sqlite"
  "$MEMPLAN" record -o "$WORK/cache$pages.plan" -- sqlite3 "$WORK/db.sqlite" ".read $WORK/script.sql" \
    >/dev/null || fail "recording sqlite3 failed"
done
"$MEMPLAN" diff --json "$WORK/cache100.plan" "$WORK/cache2000.plan" >"$WORK/sqlite.json" ||
  fail "diff of the sqlite3 plans failed"
python3 -S - "$WORK/sqlite.json" <<'PY' || fail "sqlite3: the diff does not show the page cache growing"
import json, sys
d = json.load(open(sys.argv[1]))
(image,) = d["images"]
assert image["status"] == "paired" and image["exe"] == "sqlite3", image
top = image["sites"][0]
grown = top["peak_bytes"]["change"]
pages = top["allocations"]["change"]
# About 380 pages more are cached (480 of the database's, less 100): page-sized
# blocks (4 KiB and a header), all allocated inside libsqlite3.
assert grown > 1_000_000, top
assert 300 <= pages <= 480 and 3500 <= grown / pages <= 4600, top
assert top["functions"][0]["module"].startswith("libsqlite3"), top
assert any(f["function"] == "sqlite3Malloc" for f in top["functions"]), top
# Nothing else comes near it.
assert all(abs(s["peak_bytes"]["change"]) < grown / 10 for s in image["sites"][1:]), image["sites"]
assert d["total"]["requested_peak_bytes"]["change"] > 0.9 * grown, d["total"]
PY
"$MEMPLAN" diff "$WORK/cache100.plan" "$WORK/cache2000.plan" >"$WORK/sqlite.txt"
grep -Eq '^ +[0-9]+ +\+1[0-9]{6} +[0-9]+ +\+[0-9]+  .*sqlite3Malloc' "$WORK/sqlite.txt" ||
  fail "sqlite3: the text diff does not lead with the page cache: $(cat "$WORK/sqlite.txt")"

# gcc -c twice: cc1 and as write temporary files with random names
# (/tmp/ccXXXXXX.s), which the pairing of images sees through. cc1 itself
# varies a little from run to run (one 32 KiB block of its garbage collector,
# in about half the runs, at times with a 2 KiB one: it hashes addresses, which
# ASLR moves).
printf 'int square(int x) { return x * x; }\n' >"$WORK/square.c"
for run in 1 2; do
  (cd "$WORK" && "$MEMPLAN" record -o "$WORK/gcc$run.plan" -- gcc -O2 -c square.c -o square.o) ||
    fail "recording gcc failed"
done
"$MEMPLAN" diff --json "$WORK/gcc1.plan" "$WORK/gcc2.plan" >"$WORK/gcc.json" || fail "diff of gcc failed"
python3 -S - "$WORK/gcc.json" <<'PY' || fail "gcc: the images of two recordings do not match: $(cat "$WORK/gcc.json")"
import json, sys
d = json.load(open(sys.argv[1]))
images = {i["exe"]: i for i in d["images"]}
assert "cc1" in images and any(e.endswith("as") for e in images), sorted(images)
for image in d["images"]:
    assert image["status"] == "paired", image  # not paired by executable alone
    peak = image["requested_peak_bytes"]
    assert abs(peak["change"]) <= 65536 and abs(peak["percent"]) < 2, image
    assert image["changed_sites"] + image["new_sites"] + image["gone_sites"] <= 2, image
cc1 = images["cc1"]
assert cc1["paired_sites"] > 2000, cc1  # its sites pair too, not only its figures
assert cc1["args"] != cc1["base_args"], "the temporary file names were the same"
PY
echo "sqlite3's page cache growth is named; gcc's images pair across recordings"
