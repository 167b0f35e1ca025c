#!/bin/sh
# Seed corpus for fuzz_fpdt: crafted FPDT, FBPT and S3PT tables
# (tests/cli/fpdt_gen.py), good and with damaged records.
set -eu
out=$1
mkdir -p "$out"
python3 tests/cli/fpdt_gen.py bin "$out/good.bin"
python3 tests/cli/fpdt_gen.py bin "$out/damaged.bin" --damaged
python3 tests/cli/fpdt_gen.py bin "$out/scaled.bin" --scale 3
