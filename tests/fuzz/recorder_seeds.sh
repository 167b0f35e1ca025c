#!/bin/sh
# Seed corpus for fuzz_recorder: a recorder region laid out as efipt.efi
# lays it out, with a wrapped trace in it (written by test_recorder over the
# PT model), with correct checksums (switches 0) and with the fix-ups on.
set -eu
out=$1
mkdir -p "$out"
"${EFIPT_BUILD:-build}/tests/test_recorder" --fuzz-seeds "$out" >/dev/null
