# Fuzz smoke run over a run directory's interrupt vectors (interrupts.jsonl:
# tests/fuzz/fuzz_irqlog.c; make fuzz runs it for FUZZ_SECONDS).
. tests/lib.sh
F=${EFIPT_BUILD:-build}/fuzz/fuzz_irqlog
if [ ! -x "$F" ]; then
	nok "fuzz irqlog" "$F is not built (make $F)"
	exit 0
fi
sh tests/fuzz/irqlog_seeds.sh "$TMP/corpus"
secs=${FUZZ_SMOKE_SECONDS:-10}
if "$F" -max_total_time="$secs" -print_final_stats=1 -artifact_prefix="$TMP/" \
	"$TMP/corpus" >"$TMP/log" 2>&1; then
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$TMP/log")
	ok "fuzz irqlog: ${runs:-?} executions in ${secs} s, no failure"
else
	nok "fuzz irqlog" "$(grep -E 'ERROR|SUMMARY|abort|deadly' "$TMP/log" | head -n 5 | tr '\n' ' ')"
fi
