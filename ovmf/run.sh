#!/bin/sh
# make run: boot efipt.efi under QEMU+OVMF (software emulation, no Intel PT),
# show what it prints, then the run directory it wrote, checked on the host.
#   RUN_ARGS   efipt.efi's command line (default: "caps")
#   QEMU_CPU   QEMU CPU model (default: max)
#   RUN_OUT    where the ESP image and results go (default: build/run)
#   RUN_QEMU   0: without RUN_ARGS, skip the second part (ovmf/run_qemu.sh:
#              the same efipt.efi tracing an image under QEMU's emulated PT)
# Exit status: 0 if efipt.efi exited EFI_SUCCESS, or EFI_UNSUPPORTED (no
# Intel PT, which is QEMU's answer); 1 if it failed, QEMU timed out, or
# efipt.efi never reported its exit.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
out=${RUN_OUT:-$here/build/run}
# global options first: anything after a "--" in RUN_ARGS belongs to a traced image
args="--debugcon --shutdown ${RUN_ARGS:-caps}"
mkdir -p "$out"
sh "$here/ovmf/mkesp.sh" --image "$out/esp.img" --args "$args" || exit 1
# printf, not echo: the arguments hold backslashes (\efipt.efi)
printf '== booting efipt.efi under QEMU+OVMF: efipt.efi %s\n' "$args"
: >"$out/debugcon.log"
sh "$here/ovmf/boot.sh" "$out/esp.img" "$out" "${RUN_TIMEOUT:-120}" &
qemu=$!
tail -n +1 -F --pid=$qemu "$out/debugcon.log" 2>/dev/null
wait $qemu
qemu_rc=$?
[ "$qemu_rc" -eq 124 ] && printf '== QEMU timed out (see %s/serial.log)\n' "$out"
# The run directory is the one efipt.efi announced last: a traced image (a
# second efipt.efi, say) may have written its own, which can sort later.
id=$(sed -n 's/^efipt: run directory \\efipt\\\(.*\) written\r\{0,1\}$/\1/p' "$out/debugcon.log" | tail -n 1)
if [ -n "$id" ] && [ -d "$out/efipt/$id" ]; then
	dir=$out/efipt/$id/
	printf '== run directory copied out of the ESP image: %s\n' "$dir"
	"$here/build/efipt" info "$dir"
	if [ -f "$dir/trace.pt" ] && [ -f "$dir/memmap.json" ]; then # not with --no-snapshot
		printf '== efipt decode %s\n' "$dir"
		"$here/build/efipt" decode "$dir"
	fi
else
	echo "== no run directory was written"
fi
status=$(sed -n 's/^efipt: exit \(EFI_[A-Z_]*\).*/\1/p' "$out/debugcon.log" | tail -n 1)
# with no RUN_ARGS (the caps answer above): then the product without PT
if [ -z "${RUN_ARGS:-}" ] && [ "${RUN_QEMU:-1}" != 0 ]; then
	RUN_OUT=$out sh "$here/ovmf/run_qemu.sh" || { echo "== the emulated trace failed"; exit 1; }
fi
case "$qemu_rc:$status" in
0:EFI_SUCCESS) exit 0 ;;
0:EFI_UNSUPPORTED) echo "== efipt.efi: EFI_UNSUPPORTED (no Intel PT here)"; exit 0 ;;
0:) echo "== efipt.efi did not report its exit status"; exit 1 ;;
0:*) echo "== efipt.efi failed: $status"; exit 1 ;;
*) echo "== QEMU exit status $qemu_rc"; exit 1 ;;
esac
