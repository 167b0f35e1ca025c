#!/bin/sh
# make bench: efipt-qemu.so's cost, side by side with QEMU without it, on the
# same guest run: OVMF boots efipt.efi --version --shutdown from an ESP
# image (about 0.95e9 instructions, ending by itself). Prints QEMU's CPU
# time (user+system, less noisy than wall time on a shared machine) for
# each, and the ratio.
set -u
cd "$(dirname "$0")/.." || exit 2
plugin=build/efipt-qemu.so
[ -f "$plugin" ] || { echo "bench-qemu-plugin: $plugin not built (make qemu-plugin)"; exit 0; }
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
sh ovmf/mkesp.sh --image "$t/esp.img" --args "--version --shutdown" >/dev/null || exit 1
run() {
	cp /usr/share/OVMF/OVMF_VARS_4M.fd "$t/vars.fd"
	/usr/bin/time -f "%U %S %e" -o "$t/time" timeout 600 qemu-system-x86_64 \
		-machine q35 -m 512 -smp 1 -accel tcg -cpu max \
		-drive if=pflash,format=raw,unit=0,readonly=on,file=/usr/share/OVMF/OVMF_CODE_4M.fd \
		-drive if=pflash,format=raw,unit=1,file="$t/vars.fd" -drive format=raw,file="$t/esp.img" \
		-display none -nodefaults -no-reboot -net none \
		-device isa-debug-exit,iobase=0xf4,iosize=0x04 "$@" >/dev/null 2>&1
	awk '{ printf "%.2f %.2f\n", $1 + $2, $3 }' "$t/time"
}
plain=$(run)
traced=$(run -plugin "$plugin,dir=$t/run,start=protected")
insns=$(python3 -c "import json; print(json.load(open('$t/run/manifest.json'))['trace']['insns'])")
# the same with timing packets (efipt qemu --tsc --mtc --cyc)
timed=$(run -plugin "$plugin,dir=$t/run-timed,start=protected,tsc=on,mtc=3,cyc=0")
echo "$plain $traced $insns $timed" | awk '{
	printf "qemu-plugin: boot to efipt.efi --version, %d instructions traced\n", $5
	printf "  QEMU alone          %6.2f s CPU  %6.2f s wall\n", $1, $2
	printf "  with efipt-qemu.so  %6.2f s CPU  %6.2f s wall\n", $3, $4
	printf "  ratio (CPU)         %6.2fx\n", $3 / $1
	printf "  with TSC, MTC, CYC  %6.2f s CPU  %6.2f s wall  %6.2fx\n", $6, $7, $6 / $1 }'
