# Fuzz smoke run over the firmware's boot-performance tables
# (tests/fuzz/fuzz_fpdt.c; make fuzz runs it for FUZZ_SECONDS).
. tests/lib.sh
. tests/fuzz/lib_fuzz.sh
fuzz_target fpdt || exit 0
sh tests/fuzz/fpdt_seeds.sh "$TMP/corpus"
fuzz_smoke fpdt 10
