# Fuzz smoke run over the boot trace's options and records
# (tests/fuzz/fuzz_fwtrace.c; make fuzz runs it for FUZZ_SECONDS).
. tests/lib.sh
F=${EFIPT_BUILD:-build}/fuzz/fuzz_fwtrace
if [ ! -x "$F" ]; then
	nok "fuzz fwtrace" "$F is not built (make $F)"
	exit 0
fi
mkdir -p "$TMP/corpus"
printf '\000--size 8M --mode wrap --tsc --stop-at end-of-dxe' >"$TMP/corpus/options"
printf '\000--source synthetic --fault forged-table --filter 0x1000-0x2000' >"$TMP/corpus/synth"
printf '\002\000\024\003' >"$TMP/corpus/record"
printf '\003' >"$TMP/corpus/cpus"
printf '\003\037\044\003' >"$TMP/corpus/cpus-status"
secs=${FUZZ_SMOKE_SECONDS:-10}
if "$F" -max_total_time="$secs" -print_final_stats=1 -artifact_prefix="$TMP/" \
	"$TMP/corpus" >"$TMP/log" 2>&1; then
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$TMP/log")
	ok "fuzz fwtrace: ${runs:-?} executions in ${secs} s, no failure"
else
	nok "fuzz fwtrace" "$(grep -E 'ERROR|SUMMARY|abort|deadly' "$TMP/log" | head -n 5 | tr '\n' ' ')"
fi
