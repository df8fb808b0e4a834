#!/usr/bin/env bash
# Test of `memplan show --svg`: records a small real program, draws its plan, and
# checks that the SVG is well-formed XML with block rectangles, an arena line, a
# dashed lower-bound line at the plan's lower bound, axis labels and a legend, and
# that a plan with a million blocks still gives a small picture quickly. If
# /usr/bin/chromium exists, it also renders the SVG headless and checks that the
# screenshot is not a single colour; without it the test ends with 77 (skipped)
# once everything else has passed, so the missing part is visible.
# Needs MEMPLAN (the CLI).
set -euo pipefail

: "${MEMPLAN:?set MEMPLAN to the memplan binary}"
command -v python3 >/dev/null || {
	echo "skip: python3 is needed to parse the SVG"
	exit 77
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# A small program nobody here wrote, with a few thousand allocations of mixed
# lifetimes: awk filling an array and deleting half of it.
"$MEMPLAN" record -o "$tmp/small.plan" -- awk 'BEGIN {
	for (i = 0; i < 20000; i++) a[i] = sprintf("%0*d", i % 200 + 1, i)
	for (i = 0; i < 20000; i += 2) delete a[i]
	s = ""; for (i = 1; i < 2000; i += 2) s = s a[i]
	print length(s) }' >"$tmp/awk.out" || fail "memplan record failed"
[ -s "$tmp/small.plan" ] || fail "memplan record wrote no plan"

"$MEMPLAN" show --svg "$tmp/small.plan" >"$tmp/small.svg" || fail "show --svg exited $?"
"$MEMPLAN" show --json "$tmp/small.plan" >"$tmp/small.json" || fail "show --json failed"

# Errors: a missing plan is a failure (1), an unknown option a usage error (2).
status=0
"$MEMPLAN" show --svg "$tmp/missing.plan" >/dev/null 2>&1 || status=$?
[ "$status" -eq 1 ] || fail "show --svg on a missing file exited $status, not 1"
status=0
"$MEMPLAN" show --svg --bogus "$tmp/small.plan" >/dev/null 2>&1 || status=$?
[ "$status" -eq 2 ] || fail "show --svg --bogus exited $status, not 2"

python3 - "$tmp/small.svg" "$tmp/small.json" <<'EOF' || fail "the SVG checks failed"
import json
import re
import sys
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"
root = ET.parse(sys.argv[1]).getroot()  # raises on malformed XML
plan = json.load(open(sys.argv[2]))
image = plan["images"][0]

def check(cond, what):
    if not cond:
        print("FAIL:", what)
        sys.exit(1)

check(root.tag == NS + "svg", "the root element is not <svg>")
width, height = float(root.get("width")), float(root.get("height"))
check(0 < width <= 2000 and 0 < height <= 2000, "odd picture size %sx%s" % (width, height))

# Block cells use the kN classes; there must be some, in more than one shade or
# colour, all inside the plot frame (the first unclassed rect with a stroke).
cells = [r for r in root.iter(NS + "rect") if (r.get("class") or "").startswith("k")]
check(len(cells) >= 10, "only %d block rectangles" % len(cells))
check(len({r.get("class") for r in cells}) >= 2, "all block rectangles look the same")
frame = [r for r in root.iter(NS + "rect") if r.get("stroke")]
check(frame, "no plot frame")
fx, fy = float(frame[0].get("x")), float(frame[0].get("y"))
fw, fh = float(frame[0].get("width")), float(frame[0].get("height"))
for r in cells:
    x, y = float(r.get("x")), float(r.get("y"))
    w, h = float(r.get("width")), float(r.get("height"))
    check(fx <= x and x + w <= fx + fw + 1e-6 and fy <= y and y + h <= fy + fh + 1e-6,
          "a block rectangle lies outside the plot")

texts = ["".join(t.itertext()) for t in root.iter(NS + "text")]
joined = "\n".join(texts)
for needle in ("arena", "lower bound", "time (allocation", "offset in the arena",
               "other call sites", "at peak"):
    check(needle in joined, "no text mentioning %r" % needle)

# The dashed lower-bound line sits where the y axis puts lower_bound_bytes: map it
# back through two labelled y ticks.
dashed = [l for l in root.iter(NS + "line") if l.get("stroke-dasharray")]
check(len(dashed) == 1, "expected one dashed (lower-bound) line, found %d" % len(dashed))
units = {"B": 1, "KiB": 1024, "MiB": 1024 ** 2, "GiB": 1024 ** 3}
ticks = []
for t in root.iter(NS + "text"):
    m = re.fullmatch(r"([0-9.]+) (B|KiB|MiB|GiB)", "".join(t.itertext()))
    if m and t.get("text-anchor") == "end" and "lv" not in (t.get("class") or ""):
        ticks.append((float(m.group(1)) * units[m.group(2)], float(t.get("y")) - 4))
check(len(ticks) >= 2, "fewer than two y-axis tick labels")
(b0, y0), (b1, y1) = ticks[0], ticks[-1]
expected_y = y0 + (image["lower_bound_bytes"] - b0) * (y1 - y0) / (b1 - b0)
line_y = float(dashed[0].get("y1"))
check(abs(line_y - expected_y) < 2.0,
      "lower-bound line at y=%.1f, expected %.1f" % (line_y, expected_y))
legend = [t for t in texts if " at peak, " in t]
check(1 <= len(legend) <= 8, "%d legend lines for sites" % len(legend))
print("ok: %d block rectangles, %d legend lines" % (len(cells), len(legend)))
EOF

# Readable frames and a legend that fits: a C++ program of long, inlined,
# templated names. The legend names demangled functions (an inlined one
# included) and no start-up frame, and every line of it stays inside the
# picture (by characters here; by pixels below, where chromium renders it).
command -v g++ >/dev/null || fail "g++ is needed (scripts/install-deps.sh installs it)"
cat >"$tmp/longnames.cc" <<'CC'
#include <cstdlib>
#include <cstring>
#include <vector>
namespace storage_engine { namespace page_cache {
template <typename Key> struct buffer_pool_allocator {
	static inline char *allocate_page_buffer_for_key(Key k, std::size_t bytes) {
		char *p = static_cast<char *>(std::malloc(bytes));
		std::memset(p, (int)k, bytes);
		return p;
	}
};
__attribute__((noinline)) std::vector<char *> populate_the_page_cache_with_buffers(int pages) {
	std::vector<char *> v;
	for (int i = 0; i < pages; i++)
		v.push_back(buffer_pool_allocator<long>::allocate_page_buffer_for_key(i, 4096 + i));
	return v;
}
}}
int main() {
	auto v = storage_engine::page_cache::populate_the_page_cache_with_buffers(300);
	long s = 0;
	for (char *p : v) { s += p[0]; std::free(p); }
	return s == 0 ? 1 : 0;
}
CC
g++ -O2 -g -o "$tmp/longnames" "$tmp/longnames.cc" || fail "g++ failed"
"$MEMPLAN" record -o "$tmp/cc.plan" -- "$tmp/longnames" || fail "recording the C++ program failed"
"$MEMPLAN" show --svg "$tmp/cc.plan" >"$tmp/cc.svg" || fail "show --svg of the C++ plan failed"
python3 - "$tmp/cc.svg" <<'EOF' || fail "the C++ plan's legend"
import sys
import xml.etree.ElementTree as ET
NS = "{http://www.w3.org/2000/svg}"
root = ET.parse(sys.argv[1]).getroot()
width = float(root.get("width"))
legend = ["".join(t.itertext()) for t in root.iter(NS + "text") if " at peak, " in "".join(t.itertext())]
top = legend[0]
assert "storage_engine::page_cache::" in top and top.endswith(" ← main"), top
assert not any("_Z" in l or "__libc_start" in l or "_start" in l.split() for l in legend), legend
for t in root.iter(NS + "text"):
    size = float(t.get("font-size") or root.get("font-size"))
    text = "".join(t.itertext())
    if t.get("text-anchor") in (None, "start") and "transform" not in t.attrib:
        # 0.62 em a character: wider than DejaVu Sans's average
        assert float(t.get("x")) + len(text) * 0.62 * size <= width, (len(text), text)
print("legend:", top)
EOF

# One allocation from one call site: the words agree with the counts.
command -v cc >/dev/null || fail "cc is needed (scripts/install-deps.sh installs it)"
cat >"$tmp/one.c" <<'C'
#include <stdlib.h>
int main(void) { void *volatile p = malloc(100); free(p); return 0; }
C
cc -O0 -o "$tmp/one" "$tmp/one.c" || fail "cc failed"
"$MEMPLAN" record -o "$tmp/one.plan" -- "$tmp/one" || fail "recording one allocation failed"
"$MEMPLAN" show --svg "$tmp/one.plan" >"$tmp/one.svg" || fail "show --svg of one allocation failed"
grep -q '>1 exact block, 0 pools, from 1 call site; ' "$tmp/one.svg" ||
	fail "one allocation, in the heading: $(grep -o 'exact block[^;]*' "$tmp/one.svg")"
grep -q ' at peak, 1 alloc: ' "$tmp/one.svg" ||
	fail "one allocation, in the legend: $(grep -o 'at peak, [^:]*' "$tmp/one.svg")"
# Its legend names no other call sites and no pools, as there are none.
! grep -q 'other call sites\|Dashed: pool slots' "$tmp/one.svg" ||
	fail "one allocation, in the legend: $(grep -o 'other call sites[^<]*\|Dashed[^<]*' "$tmp/one.svg")"

# Scale: a plan of a million blocks must not give a million rectangles, nor take
# long. Record a program that makes about a million short-lived allocations.
# CPython serves objects of 512 bytes or less itself, so make them larger. Run the
# interpreter itself: a wrapper script in PATH would be the plan's first image.
python=$(python3 -c 'import sys; print(sys.executable)')
"$MEMPLAN" record -o "$tmp/big.plan" -- "$python" -c '
keep = []
for i in range(1000000):
    b = bytearray(600 + i % 400)
    if i % 1000 == 0:
        keep.append(b)
' || fail "recording the large plan failed"
blocks=$("$MEMPLAN" show --json "$tmp/big.plan" | python3 -c 'import json,sys; print(json.load(sys.stdin)["images"][0]["allocations"])')
start=$(date +%s)
"$MEMPLAN" show --svg "$tmp/big.plan" >"$tmp/big.svg" || fail "show --svg on the large plan failed"
elapsed=$(($(date +%s) - start))
size=$(stat -c %s "$tmp/big.svg")
echo "large plan: $blocks blocks, SVG $size bytes, ${elapsed}s"
[ "$blocks" -ge 1000000 ] || fail "the large plan has only $blocks blocks"
[ "$size" -le 4000000 ] || fail "the SVG of $blocks blocks is $size bytes"
[ "$elapsed" -le 30 ] || fail "drawing $blocks blocks took ${elapsed}s"
python3 -c 'import sys, xml.etree.ElementTree as ET; ET.parse(sys.argv[1])' "$tmp/big.svg" ||
	fail "the large SVG is not well-formed"

if [ ! -x /usr/bin/chromium ]; then
	echo "skip: the SVG checks passed; no /usr/bin/chromium to check how it renders"
	exit 77
fi
# HOME and the profile directory point into tmp so the browser writes nothing else.
HOME="$tmp" timeout 120 /usr/bin/chromium --headless --no-sandbox --disable-gpu \
	--hide-scrollbars --user-data-dir="$tmp/profile" --window-size=1000,800 \
	--screenshot="$tmp/shot.png" "file://$tmp/small.svg" >"$tmp/chromium.log" 2>&1 ||
	{ cat "$tmp/chromium.log" >&2; fail "chromium could not render the SVG"; }
[ -s "$tmp/shot.png" ] || fail "chromium wrote no screenshot"
# Every text of the C++ plan's picture, as chromium lays it out, lies inside it.
python3 - "$tmp/cc.svg" >"$tmp/measure.html" <<'EOF'
import sys
svg = open(sys.argv[1]).read()
print("""<!DOCTYPE html><html><body style="margin:0">%s<pre id="result"></pre><script>
const svg = document.querySelector("svg"), box = svg.getBoundingClientRect();
let worst = 0, what = "";
for (const t of svg.querySelectorAll("text")) {
  const b = t.getBoundingClientRect();
  if (b.right - box.left > worst) { worst = b.right - box.left; what = t.textContent; }
  if (b.left < box.left) { worst = 1e9; what = t.textContent; }
}
document.getElementById("result").textContent =
  "RIGHT " + worst.toFixed(1) + " WIDTH " + svg.getAttribute("width") + " TEXT " + what;
</script></body></html>""" % svg[svg.index("<svg"):])
EOF
HOME="$tmp" timeout 120 /usr/bin/chromium --headless --no-sandbox --disable-gpu \
	--user-data-dir="$tmp/profile" --dump-dom "file://$tmp/measure.html" >"$tmp/measured.html" \
	2>"$tmp/chromium.log" || { cat "$tmp/chromium.log" >&2; fail "chromium could not lay the SVG out"; }
measured=$(grep -o 'RIGHT [0-9.]* WIDTH [0-9.]* TEXT [^<]*' "$tmp/measured.html") ||
	fail "chromium measured nothing"
echo "$measured" | awk '{ exit !($2 <= $4) }' || fail "a text is cut at the right edge: $measured"
echo "chromium: $measured"

# Decodes the PNG (8-bit, no palette) with zlib alone and counts distinct colours.
python3 - "$tmp/shot.png" <<'EOF' || fail "the screenshot looks empty"
import struct
import sys
import zlib

data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat, ihdr = 8, b"", None
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        ihdr = struct.unpack(">IIBBBBB", body)
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
width, height, depth, ctype = ihdr[:4]
assert depth == 8 and ctype in (0, 2, 4, 6), "unexpected PNG type %d/%d" % (depth, ctype)
bpp = {0: 1, 2: 3, 4: 2, 6: 4}[ctype]
raw = zlib.decompress(idat)
stride = width * bpp
prev = bytearray(stride)
colours = set()
for y in range(height):
    f = raw[y * (stride + 1)]
    line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b = prev[i]
        c = prev[i - bpp] if i >= bpp else 0
        if f == 1:
            line[i] = (line[i] + a) & 255
        elif f == 2:
            line[i] = (line[i] + b) & 255
        elif f == 3:
            line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    if y % 4 == 0:
        for x in range(0, stride, bpp * 4):
            colours.add(bytes(line[x:x + bpp]))
    prev = line
print("screenshot: %dx%d, %d distinct colours sampled" % (width, height, len(colours)))
sys.exit(0 if len(colours) >= 5 else 1)
EOF
echo "ok: chromium renders the SVG"
