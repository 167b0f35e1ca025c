# Fuzz smoke run over the recorder region parser (tests/fuzz/fuzz_recorder.c;
# make fuzz runs it for FUZZ_SECONDS).
. tests/lib.sh
. tests/fuzz/lib_fuzz.sh
fuzz_target recorder || exit 0
if ! sh tests/fuzz/recorder_seeds.sh "$TMP/corpus"; then
	nok "fuzz recorder" "no seed corpus (build/tests/test_recorder --fuzz-seeds)"
	exit 0
fi
fuzz_smoke recorder 10
