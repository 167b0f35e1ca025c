#!/bin/sh
# make run, second part: Intel PT without Intel PT. Boot Debian's OVMF under
# `efipt qemu` (efipt-qemu.so writes the PT a CPU would have written), run
# efipt.efi `trace` of an image there (a second efipt.efi printing its
# version, unless RUN_QEMU_IMAGE names another on the ESP), merge the
# guest's run directory and print the decoded summary. On QEMU 9.2 and newer
# (plugin API 4) efipt.efi runs its own hardware path (`--emulated-caps`
# with a Tiger Lake profile, the plugin's start=guest following its WRMSRs
# and ToPA table: docs/qemu.md); on older QEMU (7.2) it marks the image
# for the plugin (`--source qemu`, start=marker).
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
profile=$here/tests/data/cpu-profiles/tiger-lake-up3-core-i7-1165g7.txt
ver=$(qemu-system-x86_64 --version | sed -n 's/^QEMU emulator version \([0-9]*\)\.\([0-9]*\).*/\1 \2/p')
major=${ver% *} minor=${ver#* }
if [ "${major:-0}" -gt 9 ] || { [ "${major:-0}" -eq 9 ] && [ "${minor:-0}" -ge 2 ]; }; then
	args="trace --emulated-caps \\prof.txt --debugcon --shutdown -- $image"
	sh "$here/ovmf/mkesp.sh" --image "$out/esp.img" --args "$args" \
		--add "$profile:\\prof.txt" >/dev/null || exit 1
	printf '== Intel PT emulated by QEMU %s.%s following efipt.efi'"'"'s own WRMSRs: efipt qemu --start guest --cpuid %s, efipt.efi %s\n' \
		"$major" "$minor" "$(basename "$profile")" "$args"
	set -- --start guest --cpuid "$profile"
else
	args="trace --source qemu --debugcon --shutdown -- $image"
	sh "$here/ovmf/mkesp.sh" --image "$out/esp.img" --args "$args" >/dev/null || exit 1
	printf '== Intel PT emulated by QEMU: efipt qemu --start marker --stop marker, efipt.efi %s\n' "$args"
	set -- --start marker --stop marker
fi
nice -n 10 sh "$here/ovmf/qemu_esp.sh" "$efipt" "$out/esp.img" "$out" "${RUN_TIMEOUT:-300}" \
	--esp "$out/esp.img" "$@"
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
