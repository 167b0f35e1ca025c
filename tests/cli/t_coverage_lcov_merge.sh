# efipt coverage --merge of lcov tracefiles: counts add as `lcov -a` adds
# them (an independent sum in tests/cli/lcov_sum.py, and Debian's lcov
# itself), inputs that are not tracefiles are refused with file and line,
# a failed merge writes nothing, and lcov 2's genhtml (build/lcov2)
# renders a sum.
. tests/lib.sh
build_output "lcov merge"
for s in 3 5; do
	$EFIPT synth --out "$TMP/$s.pt" $PE --insns 30000 --seed $s 2>/dev/null
	$EFIPT coverage --pt "$TMP/$s.pt" $PE --symbols "$SO" --format lcov -o "$TMP/$s.info" 2>/dev/null
done
# records as "SF|record", sorted, without TN: the same tracefile whatever
# the order (lcov -a sorts SF by name); lcov 2's function records (FNL
# INDEX,START[,END] and FNA INDEX,COUNT,NAME, Debian 13) as lcov 1's FN and
# FNDA, without its VER
norm() {
	awk -F'[:,]' '/^SF:/ { sf = $0; delete at }
		/^FNL:/ { at[$2] = $3; next }
		/^FNA:/ { n = substr($0, length($1 $2 $3) + 4)
			print sf "|FN:" at[$2] "," n; print sf "|FNDA:" $3 "," n; next }
		!/^(TN|VER):/ { print sf "|" $0 }' "$1" | sort
}
# lcov 2 (Debian 13's) checks its inputs' consistency, which the tracefiles
# written by hand below do not have on purpose (a branch on a line without
# DA): lcov 2's genhtml checks efipt's own tracefiles (lcov2_renders)
LCOV_LAX=""
case "$(lcov --version 2>&1)" in *"version 1."*) ;; *) LCOV_LAX="--ignore-errors inconsistent,inconsistent" ;; esac
same_as_lcov() {
	name=$1 out=$2
	shift 2
	args=""
	for f in "$@"; do args="$args -a $f"; done
	if ! command -v lcov >/dev/null; then
		nok "$name" "lcov missing (Debian package lcov: mk/deps.sh)"
	elif ! lcov -q --rc lcov_branch_coverage=1 $LCOV_LAX $args -o "$TMP/lcov.info" 2>"$TMP/lcov.err"; then
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
# a sum of consistent tracefiles is consistent: lcov 2 renders it
. tests/cli/lcov2.sh
# (gnu-efi's crt0 was built elsewhere: a stand-in where the sum names it)
mkdir -p "$TMP/gnuefi"
i=0
while [ $i -lt 400 ]; do echo "/* $i */"; i=$((i + 1)); done >"$TMP/gnuefi/crt0-efi-x86_64.S"
sed "s|^SF:.*/crt0-efi-x86_64.S$|SF:$TMP/gnuefi/crt0-efi-x86_64.S|" "$TMP/m35.info" >"$TMP/m35s.info"
lcov2_renders "lcov merge: two runs" "$TMP/m35s.info"

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
if [ -z "$LCOV_LAX" ]; then
	same_as_lcov "lcov merge: written by hand as lcov -a" "$TMP/ab.info" "$TMP/a.info" "$TMP/b.info"
else
	echo "# lcov merge: written by hand: not compared with lcov 2's -a, which refuses an FNDA without its FN (lcov 1 takes it)"
fi
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

# lcov 2.x tracefiles, written here to geninfo(1)'s description (LCOV 2.2):
# a comment line, VER, FNL/FNA (a function and its aliases), FN with an
# end line, BRDA with flags and branches that are text (with commas),
# MCDC, DA with a checksum; added to an lcov 1.x file of the same source
mkdir -p "$TMP/v2src"
printf 'int f(int a)\n{\n  if (a)\n    return 1;\n  return 0;\n}\n' >"$TMP/v2src/a.c"
S="$TMP/v2src/a.c"
cat >"$TMP/v2.info" <<EOT
#comment: lcov 2.2
TN:t
SF:$S
VER:1a2b3c
FNL:0,1,6
FNA:0,3,f
FNA:0,2,f_alias
FNF:1
FNH:1
BRDA:3,0,a,2
BRDA:3,0,!a,1
BRDA:3,e1,g(x, y),-
BRF:3
BRH:2
MCDC:3,2,t,1,0,a && g(x, y)
MCDC:3,2,f,0,0,a && g(x, y)
MCF:2
MCH:1
DA:1,3,0123abcd
DA:3,3
DA:4,2
DA:5,1
LF:4
LH:4
end_of_record
EOT
cat >"$TMP/v1.info" <<EOT
TN:
SF:$S
FN:1,6,f
FNDA:5,f
FNF:1
FNH:1
BRDA:3,0,a,1
BRDA:3,e1,g(x, y),4
BRF:2
BRH:2
DA:1,5
DA:3,5
DA:5,5
LF:3
LH:3
end_of_record
EOT
expect_rc "lcov merge: an lcov 2.x tracefile and a 1.x one" 0 $EFIPT coverage --merge "$TMP/v2.info" "$TMP/v1.info" -o "$TMP/v12.info"
expect "lcov merge: 2.x records read and added" python3 -c "
got = open('$TMP/v12.info').read().split('\n')
for want in ['VER:1a2b3c', 'FN:1,f', 'FN:1,f_alias', 'FNDA:8,f', 'FNDA:2,f_alias', 'FNF:2', 'FNH:2',
             'BRDA:3,0,a,3', 'BRDA:3,0,!a,1', 'BRDA:3,e1,g(x, y),4', 'BRF:3', 'BRH:3',
             'MCDC:3,2,t,1,0,a && g(x, y)', 'MCDC:3,2,f,0,0,a && g(x, y)', 'MCF:2', 'MCH:1',
             'DA:1,8', 'DA:3,8', 'DA:4,2', 'DA:5,6', 'LF:4', 'LH:4']:
    assert want in got, (want, got)"
if command -v genhtml >/dev/null; then
	expect "lcov merge: genhtml renders the merged 2.x records" genhtml -q -o "$TMP/v12html" "$TMP/v12.info"
fi
sed 's/^VER:1a2b3c$/VER:ffff/' "$TMP/v2.info" >"$TMP/v2b.info"
expect_rc "lcov merge: two versions of a source (VER) refused" 1 $EFIPT coverage --merge "$TMP/v2.info" "$TMP/v2b.info" -o "$TMP/vv.info"
contains "lcov merge: the versions named" "$TMP/err" "VER ffff, where another tracefile has VER 1a2b3c"
printf 'TN:\nSF:/s/a.c\nFNA:7,1,g\nend_of_record\n' >"$TMP/g.info"
refuse "an alias of no function" "line 3: FNA:7,1,g names function 7, which no FNL before it gives" "$TMP/g.info"

# counts that pass 2^64 - 1: kept at 2^64 - 1 and said where; a count of
# 2^64 - 1 stays that when nothing is added to it
printf 'TN:\nSF:/s/a.c\nDA:1,18446744073709551615\nDA:2,18446744073709551615\nDA:3,7\nend_of_record\n' >"$TMP/big.info"
printf 'TN:\nSF:/s/a.c\nDA:1,0\nDA:2,5\nDA:3,18446744073709551616\nend_of_record\n' >"$TMP/big2.info"
expect_rc "lcov merge: sums past 2^64 - 1" 0 $EFIPT coverage --merge "$TMP/big.info" "$TMP/big2.info" -o "$TMP/bigm.info"
contains "lcov merge: 2^64 - 1 plus 0 stays 2^64 - 1" "$TMP/bigm.info" "DA:1,18446744073709551615"
contains "lcov merge: a sum past 2^64 - 1 is kept at it" "$TMP/bigm.info" "DA:2,18446744073709551615"
contains "lcov merge: a count above 2^64 - 1 read as it" "$TMP/bigm.info" "DA:3,18446744073709551615"
contains "lcov merge: the first said, with its file and line" "$TMP/err" "big2.info: line 5: a count above 2^64 - 1, taken as 18446744073709551615 (and other counts)"
expect_rc "lcov merge: a sum past 2^64 - 1 alone" 0 $EFIPT coverage --merge "$TMP/big.info" "$TMP/big.info" -o "$TMP/bigm2.info"
contains "lcov merge: the sum's record named" "$TMP/err" "SF /s/a.c: DA line 1: the counts add up past 2^64 - 1, written as 18446744073709551615 (and other counts)"
# mutated 2.x tracefiles: merged or refused with exit 1, never a crash
mkdir -p "$TMP/mut"
python3 - "$TMP/mut" "$TMP/v2.info" <<'PY'
import random, sys
r = random.Random(5)
d = open(sys.argv[2], "rb").read()
for i in range(100):
    m = bytearray(d)
    if i % 4 == 0:
        m = m[: r.randrange(len(m))]
    for _ in range(r.randrange(1, 5)):
        if m:
            m[r.randrange(len(m))] = r.choice([r.randrange(256), ord(","), ord(":"), ord("\n"), ord("9"), ord("-")])
    open("%s/%03d.info" % (sys.argv[1], i), "wb").write(bytes(m))
PY
merged_cleanly "lcov merge: 100 mutated 2.x tracefiles merged or refused cleanly" "$TMP"/mut/*.info -- "$TMP/v1.info"
