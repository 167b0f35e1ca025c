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
# codechanges.bin: its header and two records (core/codechg.h)
{ printf '\003EFIPTCC1\050\000\000\000\000\000\000\000'
  for r in 1 2; do printf '\020\000\000\000\000\000\000\000\000\060\000\000\000\000\000\000\000\000\012\000\000\000\000\000\061\300\377\300\203\370\005\165\371\303\000\000\000\000\000\000'; done; } >"$out/seed-codechanges"
# ... and a change CPU 1 ran first, copied into CPU 0's trace (flags 1, by 1)
{ printf '\003EFIPTCC1\050\000\000\000\000\000\000\000'
  printf '\020\000\000\000\000\000\000\000\000\060\000\000\000\000\000\000\000\000\012\001\001\000\000\000\061\300\377\300\203\370\005\165\371\303\000\000\000\000\000\000'; } >"$out/seed-codechanges-copy"
