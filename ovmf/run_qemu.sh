#!/bin/sh
# make run, second part: Intel PT without Intel PT. Boot Debian's OVMF under
# `efipt qemu` (efipt-qemu.so writes the PT a CPU would have written), run
# efipt.efi `trace --source qemu` of an image there (a second efipt.efi
# printing its version, unless RUN_QEMU_IMAGE names another on the ESP),
# merge the guest's run directory and print the decoded summary.
#   RUN_OUT    where results go (default: build/run); this part uses RUN_OUT/qemu
# Exit status: 0 when the run directory was made and decodes; 1 otherwise.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
out=${RUN_OUT:-$here/build/run}/qemu
efipt=$here/build/efipt
plugin=${EFIPT_QEMU_PLUGIN:-$here/build/efipt-qemu.so}
image=${RUN_QEMU_IMAGE:-\\efipt.efi --version}
if [ ! -f "$plugin" ]; then
	printf '== %s not built (make qemu-plugin says why): no emulated trace\n' "$plugin"
	exit 0
fi
rm -rf "$out"
mkdir -p "$out"
args="trace --source qemu --debugcon --shutdown -- $image"
sh "$here/ovmf/mkesp.sh" --image "$out/esp.img" --args "$args" >/dev/null || exit 1
printf '== Intel PT emulated by QEMU: efipt qemu --start marker --stop marker, efipt.efi %s\n' "$args"
nice -n 10 sh "$here/ovmf/qemu_esp.sh" "$efipt" "$out/esp.img" "$out" "${RUN_TIMEOUT:-120}" \
	--esp "$out/esp.img" --start marker --stop marker
rc=$?
if [ "$rc" -ne 0 ]; then
	printf '== efipt qemu failed (exit %s); efipt.efi printed:\n' "$rc"
	tail -n 5 "$out/debugcon.log" 2>/dev/null
	exit 1
fi
sed -n 's/^efipt: \(.* returned .*\)\r\{0,1\}$/== in the guest: \1/p' "$out/debugcon.log"
printf '== efipt decode %s\n' "$out/run"
"$efipt" decode "$out/run" || exit 1
printf '== trace.pt: %s bytes (emulated, not written by a CPU); run directory: %s\n' \
	"$(wc -c <"$out/run/trace.pt")" "$out/run"
