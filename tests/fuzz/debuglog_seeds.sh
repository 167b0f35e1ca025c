#!/bin/sh
# Seed corpus for fuzz_debuglog: debugport.jsonl records as efipt-qemu.so
# writes them (qemu-plugin/debugport.h): a line in two records, CR LF, an
# untraced AP's line with a Latin-1 byte, one without its end, a bad record.
set -eu
out=$1
mkdir -p "$out"
printf '{"cpu":0,"insn":5,"ip":"0x1014","bytes":"Hello, "}\n{"cpu":0,"insn":9,"ip":"0x1014","bytes":"world\\r\\nSecond"}\n{"cpu":1,"insn":null,"ip":"0x2000","bytes":"AP \\u00e9\\n"}\n' >"$out/lines"
printf '{"cpu":63,"insn":9223372036854775807,"ip":"0xffffffffffffffff","bytes":"edge"}\n{"cpu":1,"insn":0,"ip":"0x0","bytes":"\\n\\n"}\n' >"$out/edges"
printf '{"cpu":0,"insn":1,"ip":"0x1","bytes":"\\u0100"}\n' >"$out/bad"
