#!/bin/sh
# 'efipt top' (call stacks and symbols over every run of instructions)
# against 'efipt insn --stat' (counting only) on the same trace: a synthetic
# trace of efipt.efi's own code, symbols from build/efipt.so (copies of both
# kept with the trace). CPU time (user +
# system), best of three each, and their ratio.
#
# usage: tests/bench/bench_top.sh [MILLION-INSNS]   (default 100)
set -eu
cd "$(dirname "$0")/../.."
build=${EFIPT_BUILD:-build}
efipt=$build/efipt
m=${1:-100}
trace=$build/bench/top-$m.pt
# The trace is kept between runs, with the image it was made over: decoded
# against a rebuilt efipt.efi it would stop at the first changed byte (a
# decode error) and time next to nothing.
img=$build/bench/top-$m.efi
syms=$build/bench/top-$m.so
pe="--pe $img:0x1000000"
mkdir -p "$build/bench"
if [ ! -f "$trace" ] || [ ! -f "$img" ] || [ ! -f "$syms" ]; then
	cp "$build/efipt.efi" "$img.tmp" && mv "$img.tmp" "$img"
	cp "$build/efipt.so" "$syms.tmp" && mv "$syms.tmp" "$syms"
	$efipt synth --out "$trace.tmp" $pe --insns ${m}000000 --size 1G --seed 1 >/dev/null 2>&1
	mv "$trace.tmp" "$trace"
fi
# both decode the whole trace, or the times mean nothing
if ! $efipt insn --pt "$trace" $pe --stat >/dev/null 2>&1 ||
   ! $efipt top --pt "$trace" $pe --symbols "$syms" >/dev/null 2>&1; then
	echo "bench_top: $trace does not decode cleanly over $img: remove them to make them again" >&2
	exit 1
fi
best() {
	for i in 1 2 3; do
		/usr/bin/time -o "$build/bench/top.time" -f '%U %S' "$@" >/dev/null 2>&1 || true
		awk '{ print $1 + $2 }' "$build/bench/top.time"
	done | sort -n | head -n 1
}
s=$(best $efipt insn --pt "$trace" $pe --stat)
t=$(best $efipt top --pt "$trace" $pe --symbols "$syms")
echo "bench_top: ${m}M instructions: insn --stat ${s}s, top ${t}s ($(echo "$t $s" | awk '{ printf "%.1f", (0 < $2 ? $1 / $2 : 0) }')x)"
