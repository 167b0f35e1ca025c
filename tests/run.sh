#!/bin/sh
# Run every test program (build/tests/test_*) and every test script
# (tests/*/t_*.sh), count their "ok"/"not ok" lines, and finish with the
# line "N passed, N failed". A program that exits non-zero without printing
# a "not ok" line (a crash, a timeout) counts as one failure.
# Usage: tests/run.sh [PATTERN]   (PATTERN filters program/script names)
set -u
cd "$(dirname "$0")/.." || exit 2
pattern=${1:-}
pass=0
fail=0
log=build/tests/log
mkdir -p "$log"
run_one() {
	name=$1
	shift
	out="$log/$(echo "$name" | tr / _).out"
	start=$(date +%s)
	# no test may hang the run: each program or script gets at most 20 min
	timeout --kill-after=10 1200 "$@" >"$out" 2>&1
	rc=$?
	p=$(grep -c '^ok ' "$out" || true)
	f=$(grep -c '^not ok ' "$out" || true)
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "not ok - $name: exited with status $rc" >>"$out"
		f=1
	fi
	pass=$((pass + p))
	fail=$((fail + f))
	secs=$(($(date +%s) - start))
	printf '%-34s %5d passed %4d failed  (%ss)\n' "$name" "$p" "$f" "$secs"
	[ "$f" -eq 0 ] || grep -E '^not ok ' "$out" | head -n 20 | sed 's/^/    /'
}
for t in build/tests/test_*; do
	[ -x "$t" ] || continue
	n=$(basename "$t")
	case "$n" in *"$pattern"*) run_one "$n" "$t" ;; esac
done
for t in tests/*/t_*.sh; do
	[ -f "$t" ] || continue
	n=$(basename "$(dirname "$t")")/$(basename "$t" .sh)
	case "$n" in *"$pattern"*) run_one "$n" sh "$t" ;; esac
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
