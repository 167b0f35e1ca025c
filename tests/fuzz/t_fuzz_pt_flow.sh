# Fuzz smoke run of the flow decoder: ~15 s of libFuzzer on
# tests/fuzz/fuzz_pt_flow.c (make fuzz runs it for FUZZ_SECONDS).
. tests/lib.sh
. tests/fuzz/lib_fuzz.sh
fuzz_target pt_flow || exit 0
# the target writes its seeds there on its first run
export FLOW_FUZZ_SEEDS="$TMP/corpus"
fuzz_smoke pt_flow 15 -max_len=4096
