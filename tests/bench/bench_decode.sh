#!/bin/sh
# What a user waits for: 'efipt decode RUNDIR' (summary with branches, events
# and top images: every run of instructions goes to a sink) against
# 'efipt insn --run RUNDIR --stat' (counting only) on the same run directory,
# wall time, best of three each, and their ratio.
#
# The run directory is made once by efipt.efi under QEMU+OVMF: a synthetic
# trace of efipt.efi's own code ('trace --source synthetic'), kept in
# build/bench/run-synth-MILLIONS/ for the next run.
#
# usage: tests/bench/bench_decode.sh [MILLION-INSNS]   (default 20: ~20 s to boot)
set -eu
cd "$(dirname "$0")/../.."
build=${EFIPT_BUILD:-build}
efipt=$build/efipt
m=${1:-20}
dir=$build/bench/run-synth-$m
if [ ! -f "$dir/manifest.json" ]; then
	tmp=$build/bench/run-synth-$m.tmp
	rm -rf "$tmp"
	mkdir -p "$tmp"
	sh ovmf/mkesp.sh --image "$tmp/esp.img" --args "trace --source synthetic --insns ${m}000000 \
--size $((m / 4 + 4))M --debugcon --shutdown -- \\efipt.efi --version" >/dev/null
	echo "bench_decode: synthesizing ${m}M instructions in efipt.efi under QEMU ..."
	if ! sh ovmf/boot.sh "$tmp/esp.img" "$tmp" 600; then
		echo "bench_decode: the QEMU boot failed; see $tmp/debugcon.log" >&2
		exit 1
	fi
	run=$(ls -d "$tmp"/efipt/*/ 2>/dev/null | head -n 1)
	if [ -z "$run" ] || [ ! -f "$run/manifest.json" ]; then
		echo "bench_decode: no run directory in $tmp/efipt: $(tail -n 3 "$tmp/debugcon.log")" >&2
		exit 1
	fi
	rm -rf "$dir"
	mv "$run" "$dir"
	rm -rf "$tmp"
fi

# best wall time of three, in seconds; the command's output goes to $out
best() {
	b=
	for i in 1 2 3; do
		t0=$(date +%s%N)
		"$@" >"$out" 2>&1 || { echo "bench_decode: failed: $*: $(head -c 300 "$out")" >&2; exit 1; }
		t1=$(date +%s%N)
		t=$(((t1 - t0) / 1000))
		if [ -z "$b" ] || [ "$t" -lt "$b" ]; then b=$t; fi
	done
	echo "$b"
}
out=$build/bench/decode.out
td=$(best "$efipt" decode "$dir")
n=$(sed -n 's/^Instructions  *\([0-9]*\)$/\1/p' "$out")
out=$build/bench/insn-stat.out
ts=$(best "$efipt" insn --run "$dir" --stat)
ns=$(sed -n 's/^insn: \([0-9]*\)$/\1/p' "$out")
awk -v n="$n" -v ns="$ns" -v td="$td" -v ts="$ts" -v dir="$dir" 'BEGIN {
	printf "run directory: %s, %d instructions\n", dir, n
	printf "efipt decode:            %7.3f s %8.1f M insn/s\n", td / 1e6, n / td
	printf "efipt insn --run --stat: %7.3f s %8.1f M insn/s\n", ts / 1e6, ns / ts
	printf "ratio decode/insn --stat: %.1fx   (target <= 1.5x)\n", td / ts
	if (n != ns) { printf "MISMATCH: decode counted %d, insn --stat %d\n", n, ns; exit 1 }
}'
