# Fuzz smoke run over the firmware's boot-performance tables
# (tests/fuzz/fuzz_fpdt.c; make fuzz runs it for FUZZ_SECONDS).
. tests/lib.sh
F=${EFIPT_BUILD:-build}/fuzz/fuzz_fpdt
if [ ! -x "$F" ]; then
	nok "fuzz fpdt" "$F is not built (make $F)"
	exit 0
fi
sh tests/fuzz/fpdt_seeds.sh "$TMP/corpus"
secs=${FUZZ_SMOKE_SECONDS:-10}
if "$F" -max_total_time="$secs" -print_final_stats=1 -artifact_prefix="$TMP/" \
	"$TMP/corpus" >"$TMP/log" 2>&1; then
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$TMP/log")
	ok "fuzz fpdt: ${runs:-?} executions in ${secs} s, no failure"
else
	nok "fuzz fpdt" "$(grep -E 'ERROR|SUMMARY|abort|deadly' "$TMP/log" | head -n 5 | tr '\n' ' ')"
fi
