#!/bin/sh
# Boot an ESP image under QEMU+OVMF (TCG), always under a timeout.
#
#   ovmf/boot.sh IMAGE OUTDIR [TIMEOUT_SECONDS]
#
# IMAGE is a FAT file system or a GPT disk image (ovmf/mkesp.sh).
# OUTDIR/debugcon.log  what efipt.efi printed (I/O port 0xE9, clean text;
#                      efipt.efi writes there when given --debugcon)
# OUTDIR/serial.log    the firmware's serial console (with ANSI escapes)
# OUTDIR/qemu.status   QEMU's exit status; 124 means the timeout struck
# OUTDIR/efipt/        the run directories copied back out of the image
# QEMU_CPU (default max) picks the CPU model; QEMU_EXTRA adds QEMU options
# (e.g. "-icount shift=10,sleep=off"); OVMF_CODE and OVMF_VARS another
# firmware (the variable store is copied to OUTDIR/vars.fd first);
# QEMU_REBOOT=1 lets a reset reboot the guest (RAM kept) instead of ending QEMU.
# Exit status: 0 if QEMU ended by itself, 124 on timeout, else QEMU's status.
set -u
image=$1 out=$2 limit=${3:-60}
code=${OVMF_CODE:-/usr/share/OVMF/OVMF_CODE_4M.fd}
vars=${OVMF_VARS:-/usr/share/OVMF/OVMF_VARS_4M.fd}
[ -f "$code" ] || { echo "boot.sh: $code missing (Debian package ovmf)" >&2; exit 2; }
mkdir -p "$out"
rm -rf "$out/efipt" "$out/debugcon.log" "$out/serial.log"
cp "$vars" "$out/vars.fd"
timeout --kill-after=5 "$limit" qemu-system-x86_64 \
	-machine q35 -m 512 -smp 1 -accel tcg -cpu "${QEMU_CPU:-max}" \
	-drive if=pflash,format=raw,unit=0,readonly=on,file="$code" \
	-drive if=pflash,format=raw,unit=1,file="$out/vars.fd" \
	-drive format=raw,file="$image" \
	-debugcon file:"$out/debugcon.log" -global isa-debugcon.iobase=0xe9 \
	-serial file:"$out/serial.log" \
	-display none -nodefaults $([ "${QEMU_REBOOT:-0}" = 1 ] || echo -no-reboot) -net none \
	-device isa-debug-exit,iobase=0xf4,iosize=0x04 ${QEMU_EXTRA:-} \
	</dev/null >"$out/qemu.log" 2>&1
rc=$?
echo "$rc" >"$out/qemu.status"
export MTOOLS_SKIP_CHECK=1
fs=$image
# a GPT disk (mkesp.sh --disk) has its ESP at 1 MiB
[ "$(dd if="$image" bs=1 skip=512 count=8 status=none)" = "EFI PART" ] && fs="$image@@1M"
mcopy -s -n -i "$fs" ::/efipt "$out/" 2>/dev/null || true
exit "$rc"
