# Fuzz smoke run over the boot trace's options and records
# (tests/fuzz/fuzz_fwtrace.c; make fuzz runs it for FUZZ_SECONDS).
. tests/lib.sh
. tests/fuzz/lib_fuzz.sh
fuzz_target fwtrace || exit 0
printf '\000--size 8M --mode wrap --tsc --stop-at end-of-dxe' >"$TMP/corpus/options"
printf '\000--source synthetic --fault forged-table --filter 0x1000-0x2000' >"$TMP/corpus/synth"
printf '\002\000\024\003' >"$TMP/corpus/record"
printf '\003' >"$TMP/corpus/cpus"
printf '\003\037\044\003' >"$TMP/corpus/cpus-status"
fuzz_smoke fwtrace 10
