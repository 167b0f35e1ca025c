# Fuzz smoke run over firmware volumes, their PE images and the search for
# them in snapshots (tests/fuzz/fuzz_fv.c; make fuzz runs it for FUZZ_SECONDS).
. tests/lib.sh
. tests/fuzz/lib_fuzz.sh
fuzz_target fv || exit 0
python3 tests/fuzz/fv_seeds.py "$TMP/corpus"
fuzz_smoke fv 10 -max_len=65536
