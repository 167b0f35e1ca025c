# Fuzz smoke run over firmware volumes, their PE images and the search for
# them in snapshots (tests/fuzz/fuzz_fv.c; make fuzz runs it for FUZZ_SECONDS).
. tests/lib.sh
F=${EFIPT_BUILD:-build}/fuzz/fuzz_fv
if [ ! -x "$F" ]; then
	nok "fuzz fv" "$F is not built (make $F)"
	exit 0
fi
python3 tests/fuzz/fv_seeds.py "$TMP/corpus"
secs=${FUZZ_SMOKE_SECONDS:-10}
if "$F" -max_total_time="$secs" -max_len=65536 -print_final_stats=1 -artifact_prefix="$TMP/" \
	"$TMP/corpus" >"$TMP/log" 2>&1; then
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$TMP/log")
	ok "fuzz fv: ${runs:-?} executions in ${secs} s, no failure"
else
	nok "fuzz fv" "$(grep -E 'ERROR|SUMMARY|abort|deadly' "$TMP/log" | head -n 5 | tr '\n' ' ')"
fi
