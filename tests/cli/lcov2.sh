# lcov2_renders NAME INFO [GENHTML-OPTION...]: where make lcov2 unpacked
# Debian 13's lcov 2 (build/lcov2), its genhtml, which checks a tracefile's
# consistency (lines hit and their branches, functions hit and their lines),
# renders INFO without --ignore-errors and shows the line and branch totals
# of the system's genhtml (lcov 1 on Debian 12). Sourced by the lcov tests.
lcov2_totals() { sed -n 's/^ *\(lines\|branches\)\.*: [0-9.]*% (\(.*\))$/\1 \2/p' "$1" | tr '\n' ' '; }
lcov2_renders() {
	l2name=$1 info=$2
	shift 2
	if [ ! -x build/lcov2/bin/genhtml ]; then
		echo "# $l2name: lcov 2 not set up (make lcov2): its genhtml not tried"
		return
	fi
	rm -rf "$TMP/lcov2html" "$TMP/lcov1html"
	genhtml --branch-coverage "$@" -o "$TMP/lcov1html" "$info" >"$TMP/lcov1.out" 2>&1
	expect_rc "$l2name: lcov 2's genhtml renders it" 0 build/lcov2/bin/genhtml --branch-coverage "$@" -o "$TMP/lcov2html" "$info"
	if grep -q ERROR "$TMP/err"; then
		nok "$l2name: lcov 2's genhtml finds no error" "$(grep ERROR "$TMP/err" | head -c 400)"
	else
		ok "$l2name: lcov 2's genhtml finds no error"
	fi
	t1=$(lcov2_totals "$TMP/lcov1.out") t2=$(lcov2_totals "$TMP/out")
	if [ -n "$t1" ] && [ "$t1" = "$t2" ]; then
		ok "$l2name: lcov 2 shows lcov 1's totals ($t2)"
	else
		nok "$l2name: lcov 2 shows lcov 1's totals" "lcov 1: '$t1', lcov 2: '$t2'"
	fi
}
