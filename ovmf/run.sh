#!/bin/sh
# make run: boot efipt.efi under QEMU+OVMF (software emulation, no Intel PT),
# show what it prints, then the run directory it wrote, checked on the host.
#   RUN_ARGS   efipt.efi's command line (default: "caps")
#   QEMU_CPU   QEMU CPU model (default: max)
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
out=$here/build/run
# global options first: anything after a "--" in RUN_ARGS belongs to a traced image
args="--debugcon --shutdown ${RUN_ARGS:-caps}"
mkdir -p "$out"
sh "$here/ovmf/mkesp.sh" --image "$out/esp.img" --args "$args" || exit 1
echo "== booting efipt.efi under QEMU+OVMF: efipt.efi $args"
: >"$out/debugcon.log"
sh "$here/ovmf/boot.sh" "$out/esp.img" "$out" "${RUN_TIMEOUT:-120}" &
qemu=$!
tail -n +1 -F --pid=$qemu "$out/debugcon.log" 2>/dev/null
wait $qemu
rc=$?
[ "$rc" -eq 124 ] && echo "== QEMU timed out (see $out/serial.log)"
latest=$(ls -d "$out"/efipt/*/ 2>/dev/null | tail -n 1)
if [ -n "$latest" ]; then
	echo "== run directory copied out of the ESP image: $latest"
	"$here/build/efipt" info "$latest"
	if [ -f "$latest/trace.pt" ]; then
		echo "== efipt decode $latest"
		"$here/build/efipt" decode "$latest"
	fi
else
	echo "== no run directory was written"
fi
exit "$rc"
