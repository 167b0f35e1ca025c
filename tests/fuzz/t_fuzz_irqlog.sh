# Fuzz smoke run over a run directory's interrupt vectors (interrupts.jsonl:
# tests/fuzz/fuzz_irqlog.c; make fuzz runs it for FUZZ_SECONDS).
. tests/lib.sh
. tests/fuzz/lib_fuzz.sh
fuzz_target irqlog || exit 0
sh tests/fuzz/irqlog_seeds.sh "$TMP/corpus"
fuzz_smoke irqlog 10
