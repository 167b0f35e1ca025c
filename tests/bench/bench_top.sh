#!/bin/sh
# 'efipt top' (call stacks and symbols over every run of instructions)
# against 'efipt insn --stat' (counting only) on the same trace: a synthetic
# trace of efipt.efi's own code, symbols from build/efipt.so. CPU time (user +
# system), best of three each, and their ratio.
#
# usage: tests/bench/bench_top.sh [MILLION-INSNS]   (default 100)
set -eu
cd "$(dirname "$0")/../.."
build=${EFIPT_BUILD:-build}
efipt=$build/efipt
m=${1:-100}
pe="--pe $build/efipt.efi:0x1000000"
trace=$build/bench/top-$m.pt
mkdir -p "$build/bench"
[ -f "$trace" ] || $efipt synth --out "$trace" $pe --insns ${m}000000 --size 1G --seed 1 >/dev/null 2>&1
best() {
	for i in 1 2 3; do
		/usr/bin/time -o "$build/bench/top.time" -f '%U %S' "$@" >/dev/null 2>&1 || true
		awk '{ print $1 + $2 }' "$build/bench/top.time"
	done | sort -n | head -n 1
}
s=$(best $efipt insn --pt "$trace" $pe --stat)
t=$(best $efipt top --pt "$trace" $pe --symbols "$build/efipt.so")
echo "bench_top: ${m}M instructions: insn --stat ${s}s, top ${t}s ($(echo "$t $s" | awk '{ printf "%.1f", (0 < $2 ? $1 / $2 : 0) }')x)"
