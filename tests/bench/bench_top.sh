#!/bin/sh
# 'efipt top' (call stacks and symbols over every run of instructions)
# against 'efipt insn --stat' (counting only) on the same trace, CPU time
# (user + system), best of three each, and their ratio, over two traces:
# - a synthetic random walk through efipt.efi's code (symbols from
#   build/efipt.so; copies of both kept with the trace): the worst case, a
#   frame change every 12 instructions and branches no predictor learns;
# - real execution: efipt.efi run by OVMF under QEMU, traced by
#   efipt-qemu.so, doing real work (its in-firmware synthesizer and
#   decoder, 'trace --source synthetic --decode'), symbols from the
#   efipt.so kept with it (skipped when the plugin is not built);
# - a whole OVMF boot from the reset vector with TSC and MTC packets
#   (efipt qemu --tsc --mtc under -icount shift=3, 1.1e9 instructions),
#   no symbols: OVMF's modules named from its firmware volumes.
#
# usage: tests/bench/bench_top.sh [MILLION-INSNS [THOUSAND-SYNTH-INSNS]]
#   (defaults 100, and 1000: about 600 M instructions of real execution)
set -eu
cd "$(dirname "$0")/../.."
build=${EFIPT_BUILD:-build}
efipt=$build/efipt
m=${1:-100}
k=${2:-1000}
. tests/bench/lib_traces.sh
walk_trace "$m"
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
ratio() { echo "$1 $2" | awk '{ printf "%.1f", (0 < $2 ? $1 / $2 : 0) }'; }
s=$(best $efipt insn --pt "$trace" $pe --stat)
t=$(best $efipt top --pt "$trace" $pe --symbols "$syms")
echo "bench_top: random walk, ${m}M instructions: insn --stat ${s}s, top ${t}s ($(ratio "$t" "$s")x)"

plugin=$build/efipt-qemu.so
if [ ! -f "$plugin" ]; then
	echo "bench_top: real execution: SKIP, $plugin not built (make qemu-plugin says why)"
	exit 0
fi
run=$build/bench/top-qemu-$k
syms=$run.sym # efipt.so, matched to the image by its base name
if [ ! -f "$run/manifest.json" ] || [ ! -f "$syms/efipt.so" ]; then
	tmp=$build/bench/top-qemu.tmp
	rm -rf "$tmp"
	mkdir -p "$tmp"
	echo "bench_top: tracing efipt.efi under QEMU (${k}000 synthetic instructions decoded in firmware) ..."
	sh ovmf/mkesp.sh --image "$tmp/esp.img" --size 64 --args "trace --source qemu --debugcon \
--shutdown -- \\efipt.efi trace --source synthetic --insns ${k}000 --size 8M --decode -- \
\\efipt.efi --version" >/dev/null
	if ! sh ovmf/qemu_esp.sh "$efipt" "$tmp/esp.img" "$tmp" 600 --esp "$tmp/esp.img" \
		--start marker --stop marker >"$tmp/out" 2>&1; then
		echo "bench_top: efipt qemu failed: $(tail -n 3 "$tmp/out")" >&2
		exit 1
	fi
	rm -rf "$run" "$syms"
	mkdir -p "$syms"
	cp "$build/efipt.so" "$syms/efipt.so"
	mv "$tmp/run" "$run"
	rm -rf "$tmp"
fi
if ! $efipt insn --run "$run" --stat >/dev/null 2>&1 ||
   ! $efipt symbols "$run" --symbols "$syms" | grep -q "efipt.so"; then
	echo "bench_top: $run does not decode cleanly or efipt.so does not match: remove it to make it again" >&2
	exit 1
fi
n=$($efipt insn --run "$run" --stat 2>/dev/null | awk '/^insn:/ { printf "%d", $2 / 1000000 }')
s=$(best $efipt insn --run "$run" --stat)
t=$(best $efipt top "$run" --symbols "$syms")
echo "bench_top: real execution, ${n}M instructions: insn --stat ${s}s, top ${t}s ($(ratio "$t" "$s")x)"

boot_run || exit 1
if ! $efipt insn --run "$boot" --stat >/dev/null 2>&1 || ! $efipt top "$boot" >/dev/null 2>&1; then
	echo "bench_top: $boot does not decode cleanly: remove it to make it again" >&2
	exit 1
fi
n=$($efipt insn --run "$boot" --stat 2>/dev/null | awk '/^insn:/ { printf "%d", $2 / 1000000 }')
s=$(best $efipt insn --run "$boot" --stat)
t=$(best $efipt top "$boot")
echo "bench_top: OVMF boot with TSC+MTC, ${n}M instructions: insn --stat ${s}s, top ${t}s ($(ratio "$t" "$s")x)"
