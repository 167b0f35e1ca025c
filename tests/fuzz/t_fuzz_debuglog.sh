# Fuzz smoke run over a run directory's firmware DEBUG output
# (debugport.jsonl: tests/fuzz/fuzz_debuglog.c; make fuzz runs it for
# FUZZ_SECONDS).
. tests/lib.sh
F=${EFIPT_BUILD:-build}/fuzz/fuzz_debuglog
if [ ! -x "$F" ]; then
	nok "fuzz debuglog" "$F is not built (make $F)"
	exit 0
fi
sh tests/fuzz/debuglog_seeds.sh "$TMP/corpus"
secs=${FUZZ_SMOKE_SECONDS:-10}
if "$F" -max_total_time="$secs" -print_final_stats=1 -artifact_prefix="$TMP/" \
	"$TMP/corpus" >"$TMP/log" 2>&1; then
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$TMP/log")
	ok "fuzz debuglog: ${runs:-?} executions in ${secs} s, no failure"
else
	nok "fuzz debuglog" "$(grep -E 'ERROR|SUMMARY|abort|deadly' "$TMP/log" | head -n 5 | tr '\n' ' ')"
fi
