#!/bin/sh
# Every analysis next to the decoder alone: CPU time (user + system, best
# of three) and peak memory (max RSS) of insn --stat, decode, top, flame,
# coverage (drcov, lcov), calls --to N, timeline (Perfetto; JSON with
# --to N) on the same trace, each as a ratio to 'insn --stat'. Target
# (issue: every analysis at decoder speed): at most 2x, memory under
# 200 MB. Traces (tests/bench/lib_traces.sh):
# - a synthetic random walk through efipt.efi's code (MILLION-INSNS);
# - a whole OVMF boot under efipt qemu with TSC and MTC (skipped with
#   --walk-only, or when efipt-qemu.so is not built).
# usage: tests/bench/bench_analyses.sh [--walk-only] [MILLION-INSNS [TO]]
#   (defaults 100 and TO 10000000: the window of calls and the JSON timeline)
set -eu
cd "$(dirname "$0")/../.."
build=${EFIPT_BUILD:-build}
efipt=$build/efipt
walk_only=
if [ "${1:-}" = --walk-only ]; then
	walk_only=1
	shift
fi
m=${1:-100}
to=${2:-10000000}
out=$build/bench/analyses
mkdir -p "$out"
. tests/bench/lib_traces.sh

# measure NAME COMMAND...: best CPU time of three and the peak RSS (MB);
# prints a row, the ratio to $base (the first row's time) once it is set
base=
measure() {
	name=$1
	shift
	: >"$out/times"
	for i in 1 2 3; do
		if ! /usr/bin/time -o "$out/time" -f '%U %S %M' "$@" >/dev/null 2>"$out/err"; then
			echo "bench_analyses: $name failed: $(tail -n 2 "$out/err")" >&2
			return 0
		fi
		awk '{ print $1 + $2, $3 }' "$out/time" >>"$out/times"
	done
	best=$(sort -n "$out/times" | awk 'NR == 1 { print $1 }')
	mem=$(sort -k2 -n "$out/times" | awk 'END { printf "%d", $2 / 1024 }')
	[ -n "$base" ] || base=$best
	printf '  %-28s %7.2fs %5.1fx %6d MB\n' "$name" "$best" \
		"$(echo "$best $base" | awk '{ print 0 < $2 ? $1 / $2 : 0 }')" "$mem"
}

# every analysis over one input (INPUT: the options that name the trace)
analyses() {
	input=$1 symbols=$2
	measure "insn --stat" $efipt insn $input --stat
	measure "decode" $efipt decode $input $symbols
	measure "top" $efipt top $input $symbols
	measure "flame" $efipt flame $input $symbols
	measure "coverage (drcov)" $efipt coverage $input -o "$out/c.drcov"
	[ -z "$symbols" ] ||
		measure "coverage (lcov)" $efipt coverage $input $symbols -o "$out/c.info"
	measure "calls --to $to" $efipt calls $input $symbols --to "$to"
	measure "timeline (Perfetto)" $efipt timeline $input $symbols -o "$out/t.pftrace"
	measure "timeline --to $to (JSON)" $efipt timeline $input $symbols --to "$to" \
		-o "$out/t.json"
}

walk_trace "$m"
if ! $efipt insn --pt "$trace" $pe --stat >/dev/null 2>&1; then
	echo "bench_analyses: $trace does not decode cleanly over $img: remove them to make them again" >&2
	exit 1
fi
echo "bench_analyses: random walk, ${m}M instructions (CPU time, ratio to insn --stat, max RSS)"
analyses "--pt $trace $pe" "--symbols $syms"

[ -z "$walk_only" ] || exit 0
if [ ! -f "$build/efipt-qemu.so" ]; then
	echo "bench_analyses: OVMF boot: SKIP, $build/efipt-qemu.so not built (make qemu-plugin says why)"
	exit 0
fi
boot_run || exit 1
n=$($efipt insn --run "$boot" --stat 2>/dev/null | awk '/^insn:/ { printf "%d", $2 / 1000000 }')
echo "bench_analyses: OVMF boot with TSC+MTC, ${n}M instructions (no symbols: modules named from the firmware volumes)"
base=
analyses "--run $boot" ""
