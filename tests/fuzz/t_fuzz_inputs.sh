# Fuzz smoke run over CPUID dumps, PE headers and trace command lines
# (tests/fuzz/fuzz_inputs.c; make fuzz runs it for FUZZ_SECONDS).
. tests/lib.sh
. tests/fuzz/lib_fuzz.sh
fuzz_target inputs || exit 0
sh tests/fuzz/inputs_seeds.sh "$TMP/corpus"
fuzz_smoke inputs 10
