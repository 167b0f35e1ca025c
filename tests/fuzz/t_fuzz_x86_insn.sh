# Fuzz smoke run of the x86 length decoder: ~15 s of libFuzzer on
# tests/fuzz/fuzz_x86_insn.c (make fuzz runs it for FUZZ_SECONDS).
. tests/lib.sh
F=${EFIPT_BUILD:-build}/fuzz/fuzz_x86_insn
if [ ! -x "$F" ]; then
	nok "fuzz x86_insn" "$F is not built (make $F)"
	exit 0
fi
mkdir -p "$TMP/corpus"
# Seeds: a slice of real code, so the fuzzer starts from valid instructions.
for f in /usr/lib/x86_64-linux-gnu/libc.so.6 /usr/bin/bash; do
	[ -f "$f" ] && dd if="$f" of="$TMP/corpus/$(basename "$f")" bs=4096 skip=40 count=1 2>/dev/null
done
secs=${FUZZ_SMOKE_SECONDS:-15}
if "$F" -max_total_time="$secs" -max_len=256 -print_final_stats=1 -artifact_prefix="$TMP/" \
	"$TMP/corpus" >"$TMP/log" 2>&1; then
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$TMP/log")
	ok "fuzz x86_insn: ${runs:-?} executions in ${secs} s, no failure"
else
	nok "fuzz x86_insn" "$(grep -E 'ERROR|SUMMARY|abort|deadly' "$TMP/log" | head -n 5 | tr '\n' ' ')"
	for a in "$TMP"/crash-* "$TMP"/leak-* "$TMP"/timeout-*; do
		[ -f "$a" ] && echo "# reproducer: $(od -An -tx1 "$a" | head -n 4 | tr -s ' \n' ' ')"
	done
fi
