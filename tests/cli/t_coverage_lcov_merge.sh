# efipt coverage --merge of lcov tracefiles: counts add as `lcov -a` adds
# them (an independent sum in tests/cli/lcov_sum.py, and Debian's lcov
# itself), inputs that are not tracefiles are refused with file and line,
# and a failed merge writes nothing.
. tests/lib.sh
build_output "lcov merge"
for s in 3 5; do
	$EFIPT synth --out "$TMP/$s.pt" $PE --insns 30000 --seed $s 2>/dev/null
	$EFIPT coverage --pt "$TMP/$s.pt" $PE --symbols "$SO" --format lcov -o "$TMP/$s.info" 2>/dev/null
done
# records as "SF|record", sorted, without TN: the same tracefile whatever
# the order (lcov -a sorts SF by name)
norm() { awk '/^SF:/ { sf = $0 } !/^TN:/ { print sf "|" $0 }' "$1" | sort; }
same_as_lcov() {
	name=$1 out=$2
	shift 2
	args=""
	for f in "$@"; do args="$args -a $f"; done
	if ! command -v lcov >/dev/null; then
		nok "$name" "lcov missing (Debian package lcov: mk/deps.sh)"
	elif ! lcov -q --rc lcov_branch_coverage=1 $args -o "$TMP/lcov.info" 2>"$TMP/lcov.err"; then
		nok "$name" "lcov -a failed: $(head -c 300 "$TMP/lcov.err")"
	elif [ "$(norm "$out")" = "$(norm "$TMP/lcov.info")" ]; then
		ok "$name"
	else
		norm "$out" >"$TMP/a"
		norm "$TMP/lcov.info" >"$TMP/b"
		nok "$name" "$(diff "$TMP/a" "$TMP/b" | head -5)"
	fi
}
sum_ok() {
	name=$1
	shift
	r=$(python3 tests/cli/lcov_sum.py "$@")
	case "$r" in ok*) ok "$name ($r)" ;; *) nok "$name" "$r" ;; esac
}

expect_rc "lcov merge: the same run twice" 0 $EFIPT coverage --merge "$TMP/3.info" "$TMP/3.info" --format lcov -o "$TMP/m2.info"
sum_ok "lcov merge: every count doubled" "$TMP/m2.info" "$TMP/3.info" "$TMP/3.info"
a=$(grep -m1 '^DA:.*,[1-9][0-9]*$' "$TMP/3.info")
contains "lcov merge: a hit line counts twice" "$TMP/m2.info" "${a%,*},$((2 * ${a##*,}))"
same_as_lcov "lcov merge: the same as lcov -a" "$TMP/m2.info" "$TMP/3.info" "$TMP/3.info"
expect_rc "lcov merge: two runs (OUT.info: no --format needed)" 0 $EFIPT coverage --merge "$TMP/3.info" "$TMP/5.info" -o "$TMP/m35.info"
sum_ok "lcov merge: two runs add up" "$TMP/m35.info" "$TMP/3.info" "$TMP/5.info"
same_as_lcov "lcov merge: two runs as lcov -a" "$TMP/m35.info" "$TMP/3.info" "$TMP/5.info"
expect_rc "lcov merge: one file" 0 $EFIPT coverage --merge "$TMP/3.info" --format lcov -o "$TMP/m1.info"
if [ "$(norm "$TMP/m1.info")" = "$(norm "$TMP/3.info")" ]; then ok "lcov merge: one file gives it back"; else nok "lcov merge: one file gives it back" "differs"; fi

# '-' + n = n, '-' + '-' = '-'; FN lines united; the checker can fail
printf 'TN:\nSF:/s/a.c\nFN:3,f\nFNDA:0,f\nFNF:1\nFNH:0\nBRDA:4,0,0,-\nBRDA:4,0,1,-\nBRDA:5,0,0,-\nBRF:3\nBRH:0\nDA:3,0\nDA:4,0\nLF:2\nLH:0\nend_of_record\n' >"$TMP/a.info"
printf 'TN:\nSF:/s/a.c\nFN:9,g\nFNDA:2,g\nFNDA:1,f\nBRDA:4,0,0,2\nBRDA:4,0,1,0\nDA:3,1\nDA:9,2\nLF:2\nLH:2\nend_of_record\n' >"$TMP/b.info"
expect_rc "lcov merge: written by hand" 0 $EFIPT coverage --merge "$TMP/a.info" "$TMP/b.info" --format lcov -o "$TMP/ab.info"
contains "lcov merge: '-' + 2 = 2" "$TMP/ab.info" "BRDA:4,0,0,2"
contains "lcov merge: '-' + 0 = 0" "$TMP/ab.info" "BRDA:4,0,1,0"
contains "lcov merge: '-' alone stays '-'" "$TMP/ab.info" "BRDA:5,0,0,-"
contains "lcov merge: FN of both" "$TMP/ab.info" "FN:9,g"
contains "lcov merge: FNDA added" "$TMP/ab.info" "FNDA:1,f"
contains "lcov merge: totals counted again" "$TMP/ab.info" "BRF:3
BRH:1"
sum_ok "lcov merge: written by hand adds up" "$TMP/ab.info" "$TMP/a.info" "$TMP/b.info"
same_as_lcov "lcov merge: written by hand as lcov -a" "$TMP/ab.info" "$TMP/a.info" "$TMP/b.info"
sed 's/^DA:3,1$/DA:3,2/' "$TMP/ab.info" >"$TMP/bad.info"
r=$(python3 tests/cli/lcov_sum.py "$TMP/bad.info" "$TMP/a.info" "$TMP/b.info")
case "$r" in ok*) nok "lcov merge: the checker rejects a wrong sum" "accepted" ;; *) ok "lcov merge: the checker rejects a wrong sum" ;; esac

# not tracefiles: named with the line; nothing written, an old OUT kept
echo keep >"$TMP/keep.info"
refuse() {
	what=$1 why=$2 file=$3
	expect_rc "lcov merge: $what refused" 1 $EFIPT coverage --merge "$TMP/3.info" "$file" --format lcov -o "$TMP/keep.info"
	contains "lcov merge: $what named" "$TMP/err" "$file: $why"
	if [ "$(cat "$TMP/keep.info")" = keep ] && ! ls "$TMP" | grep -q '^keep.info.'; then
		ok "lcov merge: $what: the old OUT kept, no temporary"
	else
		nok "lcov merge: $what: the old OUT kept, no temporary" "$(ls "$TMP")"
	fi
}
$EFIPT coverage --pt "$TMP/3.pt" $PE -o "$TMP/3.drcov" 2>/dev/null
refuse "a drcov file" "line 1: 'DRCOV VERSION' is no lcov tracefile record" "$TMP/3.drcov"
printf 'TN:\nSF:/s/a.c\nDA:3,x\nend_of_record\n' >"$TMP/c.info"
refuse "a bad count" "line 3: DA:3,x is malformed" "$TMP/c.info"
printf 'TN:\nSF:/s/a.c\nDA:3,1\n' >"$TMP/d.info"
refuse "a cut file" "line 3: the file ends inside an SF section" "$TMP/d.info"
printf 'DA:3,1\n' >"$TMP/e.info"
refuse "a record outside SF" "line 1: DA outside an SF" "$TMP/e.info"
: >"$TMP/f.info"
refuse "an empty file" "not an lcov tracefile: no SF record" "$TMP/f.info"
expect_rc "lcov merge: a missing input" 2 $EFIPT coverage --merge "$TMP/none.info" --format lcov -o "$TMP/keep.info"
contains "lcov merge: a missing input named" "$TMP/err" "none.info"
expect_rc "lcov merge: -o required" 2 $EFIPT coverage --merge "$TMP/3.info" --format lcov
contains "lcov merge: -o required said" "$TMP/err" "--merge needs -o OUT.info"
expect_rc "lcov merge: no trace inputs with it" 2 $EFIPT coverage --merge "$TMP/3.info" --pt "$TMP/3.pt" --format lcov -o "$TMP/x.info"
contains "lcov merge: no trace inputs said" "$TMP/err" "--merge takes tracefiles and -o OUT only"
