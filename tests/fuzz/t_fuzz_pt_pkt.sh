# Fuzz smoke run of the packet layer: ~20 s of libFuzzer on
# tests/fuzz/fuzz_pt_pkt.c (make fuzz runs it for FUZZ_SECONDS).
. tests/lib.sh
F=${EFIPT_BUILD:-build}/fuzz/fuzz_pt_pkt
if [ ! -x "$F" ]; then
	nok "fuzz pt_pkt" "$F is not built (make $F)"
	exit 0
fi
mkdir -p "$TMP/corpus"
python3 tests/cli/packets_gen.py all >"$TMP/corpus/seed-all"
python3 tests/cli/packets_gen.py errors >"$TMP/corpus/seed-errors"
secs=${FUZZ_SMOKE_SECONDS:-20}
if "$F" -max_total_time="$secs" -print_final_stats=1 -artifact_prefix="$TMP/" \
	"$TMP/corpus" >"$TMP/log" 2>&1; then
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$TMP/log")
	ok "fuzz pt_pkt: ${runs:-?} executions in ${secs} s, no failure"
else
	nok "fuzz pt_pkt" "$(grep -E 'ERROR|SUMMARY|abort|deadly' "$TMP/log" | head -n 5 | tr '\n' ' ')"
	for a in "$TMP"/crash-* "$TMP"/leak-* "$TMP"/timeout-*; do
		[ -f "$a" ] && echo "# reproducer: $(od -An -tx1 "$a" | head -n 4 | tr -s ' \n' ' ')"
	done
fi
