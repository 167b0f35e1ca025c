# Fuzz smoke run of the packet layer: ~20 s of libFuzzer on
# tests/fuzz/fuzz_pt_pkt.c (make fuzz runs it for FUZZ_SECONDS).
. tests/lib.sh
. tests/fuzz/lib_fuzz.sh
fuzz_target pt_pkt || exit 0
python3 tests/cli/packets_gen.py all >"$TMP/corpus/seed-all"
python3 tests/cli/packets_gen.py errors >"$TMP/corpus/seed-errors"
fuzz_smoke pt_pkt 20
