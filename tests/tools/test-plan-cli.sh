#!/bin/sh
# Test of `memplan plan --csv`: exit codes (0, 2 on a usage error, 1 on a missing
# or bad file), and that the written plan has an offset column, is valid by an
# independent awk checker, and is no smaller than the lower bound it reports.
# Needs MEMPLAN (the CLI) and MEMPLAN_DSA_DIR (the instances in tests/tools/dsa).
set -u

: "${MEMPLAN:?set MEMPLAN to the memplan binary}"
if [ -z "${MEMPLAN_DSA_DIR:-}" ] || [ ! -f "$MEMPLAN_DSA_DIR/input.12.csv" ]; then
	echo "FAIL: MEMPLAN_DSA_DIR does not hold the instances of tests/tools/dsa" >&2
	exit 1
fi

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# Validates a planned CSV (id,lower,upper,size[,alignment],offset) by brute force
# over all pairs; prints the arena height.
check_plan() {
	awk -F, '
	NR == 1 {
		for (i = 1; i <= NF; i++) col[$i] = i
		if (!("offset" in col) || !("lower" in col) || !("upper" in col) || !("size" in col)) {
			print "no offset column" > "/dev/stderr"; exit 1
		}
		next
	}
	{
		n++; lo[n] = $col["lower"] + 0; hi[n] = $col["upper"] + 0
		sz[n] = $col["size"] + 0; off[n] = $col["offset"] + 0
		if (off[n] != int(off[n]) || off[n] < 0) { print "bad offset " $0 > "/dev/stderr"; exit 1 }
		if ("alignment" in col && off[n] % ($col["alignment"] + 0)) { print "misaligned " $0 > "/dev/stderr"; exit 1 }
		if (off[n] + sz[n] > top) top = off[n] + sz[n]
	}
	END {
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) {
			if (sz[i] == 0 || sz[j] == 0) continue
			if (lo[i] < hi[j] && lo[j] < hi[i] && off[i] < off[j] + sz[j] && off[j] < off[i] + sz[i]) {
				print "overlap at rows " i " and " j > "/dev/stderr"; exit 1
			}
		}
		print top
	}' "$1"
}

# Usage errors exit 2.
"$MEMPLAN" plan >/dev/null 2>&1; [ $? -eq 2 ] || fail "no arguments should exit 2"
"$MEMPLAN" plan --csv "$MEMPLAN_DSA_DIR/input.12.csv" --time-limit abc >/dev/null 2>&1
[ $? -eq 2 ] || fail "bad --time-limit should exit 2"
# Seconds are digits with an optional fraction, as every number option takes.
for t in 0x2 1e1 -0 .5; do
	"$MEMPLAN" plan --csv "$MEMPLAN_DSA_DIR/input.12.csv" --time-limit "$t" >/dev/null 2>&1
	[ $? -eq 2 ] || fail "--time-limit $t should exit 2"
done
# --capacity applies to --csv alone: a re-plan does not ignore it silently.
"$MEMPLAN" plan "$tmp/app.plan" -o "$tmp/x.plan" --capacity 100 >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] || fail "--capacity with a PLAN should exit 2"
grep -qx "memplan: plan: --capacity applies only to --csv IN" "$tmp/err" ||
	fail "--capacity with a PLAN: $(cat "$tmp/err")"
"$MEMPLAN" plan --csv "$MEMPLAN_DSA_DIR/input.12.csv" --bogus >/dev/null 2>&1
[ $? -eq 2 ] || fail "unknown option should exit 2"
"$MEMPLAN" plan --csv "$MEMPLAN_DSA_DIR/input.12.csv" -o "$tmp/a.csv" --output "$tmp/b.csv" \
	>/dev/null 2>"$tmp/err"
[ $? -eq 2 ] || fail "-o given twice should exit 2"
[ "$(cat "$tmp/err")" = "memplan: plan: -o OUT is given more than once" ] ||
	fail "-o given twice: $(cat "$tmp/err")"
[ ! -e "$tmp/a.csv" ] && [ ! -e "$tmp/b.csv" ] || fail "-o given twice wrote a file"

# An argument too many is named, not the PLAN before it; with --csv, a PLAN is
# one too many.
"$MEMPLAN" plan "$tmp/app.plan" extra -o "$tmp/x.plan" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] || fail "an extra argument should exit 2"
[ "$(head -n 1 "$tmp/err")" = "memplan: plan: unexpected argument 'extra'" ] ||
	fail "an extra argument: $(head -n 1 "$tmp/err")"
"$MEMPLAN" plan --csv "$MEMPLAN_DSA_DIR/input.12.csv" "$tmp/app.plan" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] || fail "--csv with a PLAN should exit 2"
[ "$(head -n 1 "$tmp/err")" = "memplan: plan: unexpected argument '$tmp/app.plan'" ] ||
	fail "--csv with a PLAN: $(head -n 1 "$tmp/err")"

# docs/usage.md names every column the reader takes.
usage_md=$(dirname "$0")/../../docs/usage.md
csv_doc=$(awk '/^- `memplan plan --csv/ { on = 1 } on && /^- `memplan diff/ { exit } on' "$usage_md")
for column in id lower upper size alignment offset; do
	echo "$csv_doc" | grep -qw "$column" || fail "docs/usage.md does not describe the CSV column $column"
done

# A missing file and a bad file exit 1 and name the file.
"$MEMPLAN" plan --csv "$tmp/missing.csv" >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] || fail "missing file should exit 1"
grep -q "memplan: $tmp/missing.csv: " "$tmp/err" || fail "error does not name the file"
printf 'id,lower,upper,size\na,0,3,4\nb,3,3,4\n' >"$tmp/bad.csv"
"$MEMPLAN" plan --csv "$tmp/bad.csv" >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] || fail "bad file should exit 1"
grep -q "line 3" "$tmp/err" || fail "error does not name line 3"

# A CSV where a plan goes is a usage error that says to use --csv.
"$MEMPLAN" plan "$tmp/bad.csv" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] || fail "a CSV given as a plan should exit 2"
grep -q -- "--csv $tmp/bad.csv" "$tmp/err" || fail "no hint to use --csv: $(cat "$tmp/err")"

# Blocks that no 64-bit arena holds are bad input, not a planner failure; two
# of 2^62 bytes alive at once are planned one above the other.
printf 'id,lower,upper,size\na,0,2,18446744073709551615\nb,1,3,16\n' >"$tmp/huge.csv"
"$MEMPLAN" plan --csv "$tmp/huge.csv" >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] || fail "an instance past 2^63 bytes should exit 1"
grep -q "line 2: the sizes and alignments so far add up to more than 2^63 bytes" "$tmp/err" ||
	fail "unclear error for an instance past 2^63 bytes: $(cat "$tmp/err")"
printf 'id,lower,upper,size\na,0,2,4611686018427387904\nb,1,3,4611686018427387904\n' >"$tmp/most.csv"
"$MEMPLAN" plan --csv "$tmp/most.csv" --time-limit 0 >"$tmp/most.out" 2>"$tmp/err" ||
	fail "two blocks of 2^62 bytes: $(cat "$tmp/err")"
grep -q "arena 9223372036854775808 bytes" "$tmp/err" || fail "two blocks of 2^62 bytes: $(cat "$tmp/err")"
sort "$tmp/most.out" | cut -d, -f5 | tr '\n' ' ' | grep -q "^0 4611686018427387904 offset $" ||
	fail "two blocks of 2^62 bytes: offsets $(cat "$tmp/most.out")"

# input.12.csv to stdout: optimum 12.
"$MEMPLAN" plan --csv "$MEMPLAN_DSA_DIR/input.12.csv" --time-limit 1 >"$tmp/12.csv" 2>"$tmp/err" ||
	fail "input.12.csv failed: $(cat "$tmp/err")"
head -n 1 "$tmp/12.csv" | grep -q '^id,lower,upper,size,offset$' || fail "no offset column"
[ "$(wc -l <"$tmp/12.csv")" -eq 6 ] || fail "input.12.csv: expected 5 rows"
top=$(check_plan "$tmp/12.csv") || fail "input.12.csv: invalid plan"
[ "$top" -eq 12 ] || fail "input.12.csv: arena $top, expected 12"
grep -q "arena 12 bytes, lower bound 12 bytes" "$tmp/err" || fail "stderr lacks the figures"

# "-" is stdin for --csv and stdout for -o, not a file of that name; a plan is
# binary, so it is no stdout for one.
(cd "$tmp" && "$MEMPLAN" plan --csv - -o - --time-limit 1 <"$MEMPLAN_DSA_DIR/input.12.csv" \
	>"$tmp/12-stdin.csv" 2>"$tmp/err") || fail "--csv - -o -: $(cat "$tmp/err")"
[ ! -e "$tmp/-" ] || fail "-o - wrote a file named -"
cmp -s "$tmp/12.csv" "$tmp/12-stdin.csv" || fail "--csv - -o -: $(cat "$tmp/12-stdin.csv")"
grep -q "^memplan: <stdin>: 5 blocks, arena 12 bytes" "$tmp/err" || fail "--csv -: $(cat "$tmp/err")"
printf 'id,lower,upper,size\na,0,1,16\n' | "$MEMPLAN" plan --csv - >/dev/null 2>"$tmp/err" ||
	fail "one block: $(cat "$tmp/err")"
grep -q "^memplan: <stdin>: 1 block, arena 16 bytes" "$tmp/err" || fail "one block: $(cat "$tmp/err")"
(cd "$tmp" && "$MEMPLAN" plan "$tmp/app.plan" -o - >/dev/null 2>"$tmp/err")
[ $? -eq 2 ] || fail "a PLAN to -o - should exit 2"
grep -qx "memplan: plan: a plan is binary and goes to a file, not to stdout (-o -)" "$tmp/err" ||
	fail "a PLAN to -o -: $(cat "$tmp/err")"
[ ! -e "$tmp/-" ] || fail "plan PLAN -o - wrote a file named -"

# Two challenging instances with -o and a short limit.
for f in A.1048576.csv K.1048576.csv; do
	"$MEMPLAN" plan --csv "$MEMPLAN_DSA_DIR/$f" -o "$tmp/$f" --time-limit 1 2>"$tmp/err" ||
		fail "$f failed: $(cat "$tmp/err")"
	top=$(check_plan "$tmp/$f") || fail "$f: invalid plan"
	arena=$(sed -n 's/.*arena \([0-9]*\) bytes.*/\1/p' "$tmp/err")
	lb=$(sed -n 's/.*lower bound \([0-9]*\) bytes.*/\1/p' "$tmp/err")
	[ -n "$arena" ] && [ -n "$lb" ] || fail "$f: no figures on stderr"
	[ "$arena" -ge "$lb" ] || fail "$f: arena $arena below lower bound $lb"
	[ "$top" -le "$arena" ] || fail "$f: plan height $top above reported arena $arena"
	[ "$(wc -l <"$tmp/$f")" -eq "$(wc -l <"$MEMPLAN_DSA_DIR/$f")" ] || fail "$f: row count"
done

# A plan proven optimal above the lower bound (alignment keeps it there) ends
# as soon as it is proven, not at the time limit: two aligned blocks took the
# whole 10 s once, the search widening its budget below a proven floor.
printf 'id,lower,upper,size,alignment\n0,0,10,100,16\n1,5,15,200,16\n' >"$tmp/aligned.csv"
"$MEMPLAN" plan --csv "$tmp/aligned.csv" --time-limit 30 >"$tmp/aligned.out" 2>"$tmp/err" ||
	fail "plan of two aligned blocks failed: $(cat "$tmp/err")"
grep -Eq "arena 308 bytes, lower bound 300 bytes, ratio 1.0267, [0-4]\.[0-9]+ s$" "$tmp/err" ||
	fail "two aligned blocks: not 308 bytes, or not proven before 5 s of 30: $(cat "$tmp/err")"

# A usage error gets the usage lines, not the whole help, as every command's.
"$MEMPLAN" plan >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && [ "$(grep -c . "$tmp/err")" -eq 3 ] && grep -q "^usage: memplan plan" "$tmp/err" ||
	fail "plan's usage error: $(cat "$tmp/err")"

# An unwritable output exits 1 and leaves nothing behind.
"$MEMPLAN" plan --csv "$MEMPLAN_DSA_DIR/input.12.csv" -o "$tmp/nodir/out.csv" --time-limit 0 \
	2>/dev/null
[ $? -eq 1 ] || fail "unwritable output should exit 1"
exit 0
