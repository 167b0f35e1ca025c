# Fuzz smoke run over the recorder region parser (tests/fuzz/fuzz_recorder.c;
# make fuzz runs it for FUZZ_SECONDS).
. tests/lib.sh
F=${EFIPT_BUILD:-build}/fuzz/fuzz_recorder
if [ ! -x "$F" ]; then
	nok "fuzz recorder" "$F is not built (make $F)"
	exit 0
fi
if ! sh tests/fuzz/recorder_seeds.sh "$TMP/corpus"; then
	nok "fuzz recorder" "no seed corpus (build/tests/test_recorder --fuzz-seeds)"
	exit 0
fi
secs=${FUZZ_SMOKE_SECONDS:-10}
if "$F" -max_total_time="$secs" -print_final_stats=1 -artifact_prefix="$TMP/" \
	"$TMP/corpus" >"$TMP/log" 2>&1; then
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$TMP/log")
	ok "fuzz recorder: ${runs:-?} executions in ${secs} s, no failure"
else
	nok "fuzz recorder" "$(grep -E 'ERROR|SUMMARY|abort|deadly' "$TMP/log" | head -n 5 | tr '\n' ' ')"
fi
