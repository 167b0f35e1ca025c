# Fuzz smoke run over a run directory's firmware DEBUG output
# (debugport.jsonl: tests/fuzz/fuzz_debuglog.c; make fuzz runs it for
# FUZZ_SECONDS).
. tests/lib.sh
. tests/fuzz/lib_fuzz.sh
fuzz_target debuglog || exit 0
sh tests/fuzz/debuglog_seeds.sh "$TMP/corpus"
fuzz_smoke debuglog 10
