# The fuzz smoke runs' one shape (sourced after tests/lib.sh): the target
# built, a seed corpus in $TMP/corpus, libFuzzer for a few seconds.
#
# fuzz_target NAME: F is build/fuzz/fuzz_NAME, $TMP/corpus made; returns 1
#   (a failure said) when it is not built.
# fuzz_smoke NAME SECS [LIBFUZZER-OPTION...]: run F over $TMP/corpus for
#   FUZZ_SMOKE_SECONDS (default SECS); ok with the executions, else nok
#   with libFuzzer's error and the reproducer's first bytes.
fuzz_target() {
	F=${EFIPT_BUILD:-build}/fuzz/fuzz_$1
	if [ ! -x "$F" ]; then
		nok "fuzz $1" "$F is not built (make $F)"
		return 1
	fi
	mkdir -p "$TMP/corpus"
}

fuzz_smoke() {
	name=$1 secs=${FUZZ_SMOKE_SECONDS:-$2}
	shift 2
	if "$F" -max_total_time="$secs" "$@" -print_final_stats=1 -artifact_prefix="$TMP/" \
		"$TMP/corpus" >"$TMP/log" 2>&1; then
		runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$TMP/log")
		ok "fuzz $name: ${runs:-?} executions in ${secs} s, no failure"
	else
		nok "fuzz $name" "$(grep -E 'ERROR|SUMMARY|abort|deadly' "$TMP/log" | head -n 5 | tr '\n' ' ')"
		for a in "$TMP"/crash-* "$TMP"/leak-* "$TMP"/timeout-* "$TMP"/oom-*; do
			[ -f "$a" ] && echo "# reproducer: $(od -An -tx1 "$a" | head -n 4 | tr -s ' \n' ' ')"
		done
	fi
}
