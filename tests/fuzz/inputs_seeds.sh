#!/bin/sh
# Seed corpus for fuzz_inputs: a real CPUID dump, a real PE image (the
# first 8 KiB of efipt.efi) and a trace command line, each behind the byte
# that selects its parser.
set -eu
out=$1
mkdir -p "$out"
{ printf '\000'; cat tests/data/cpu-profiles/skylake-s-core-i7-6700k.txt; } >"$out/seed-cpuid"
{ printf '\001'; head -c 8192 build/efipt.efi; } >"$out/seed-pe"
printf '\002--size 16M --output topa --mode wrap --mtc=3 --cyc=1 --psb=4K --filter 0x1000-0x2000 --stop 0x3000 --cr3 0x1000 --kernel' >"$out/seed-args"
