# Fuzz smoke run of the x86 length decoder: ~15 s of libFuzzer on
# tests/fuzz/fuzz_x86_insn.c (make fuzz runs it for FUZZ_SECONDS).
. tests/lib.sh
. tests/fuzz/lib_fuzz.sh
fuzz_target x86_insn || exit 0
# Seeds: a slice of real code, so the fuzzer starts from valid instructions.
for f in /usr/lib/x86_64-linux-gnu/libc.so.6 /usr/bin/bash; do
	[ -f "$f" ] && dd if="$f" of="$TMP/corpus/$(basename "$f")" bs=4096 skip=40 count=1 2>/dev/null
done
fuzz_smoke x86_insn 15 -max_len=256
