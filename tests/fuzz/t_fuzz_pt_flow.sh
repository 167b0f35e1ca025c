# Fuzz smoke run of the flow decoder: ~15 s of libFuzzer on
# tests/fuzz/fuzz_pt_flow.c (make fuzz runs it for FUZZ_SECONDS).
. tests/lib.sh
F=${EFIPT_BUILD:-build}/fuzz/fuzz_pt_flow
if [ ! -x "$F" ]; then
	nok "fuzz pt_flow" "$F is not built (make $F)"
	exit 0
fi
mkdir -p "$TMP/corpus"
secs=${FUZZ_SMOKE_SECONDS:-15}
if FLOW_FUZZ_SEEDS="$TMP/corpus" "$F" -max_total_time="$secs" -max_len=4096 -print_final_stats=1 \
	-artifact_prefix="$TMP/" "$TMP/corpus" >"$TMP/log" 2>&1; then
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$TMP/log")
	ok "fuzz pt_flow: ${runs:-?} executions in ${secs} s, no failure"
else
	nok "fuzz pt_flow" "$(grep -E 'ERROR|SUMMARY|abort|deadly' "$TMP/log" | head -n 5 | tr '\n' ' ')"
	for a in "$TMP"/crash-* "$TMP"/leak-* "$TMP"/timeout-*; do
		[ -f "$a" ] && echo "# reproducer: $(od -An -tx1 "$a" | head -n 4 | tr -s ' \n' ' ')"
	done
fi
