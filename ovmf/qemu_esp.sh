#!/bin/sh
# `efipt qemu` over Debian's OVMF booting an ESP image (QEMU TCG, always
# under a timeout): the one command line that make run, the QEMU tests and
# the benchmarks share.
#
#   ovmf/qemu_esp.sh EFIPT ESP OUTDIR TIMEOUT_SECONDS [EFIPT-QEMU-OPTIONS...]
#
# EFIPT is the host efipt, ESP the image to boot (ovmf/mkesp.sh), the
# options are efipt qemu's (--esp, --start marker, ...). QEMU_EXTRA adds
# QEMU options (e.g. a second -plugin).
# OUTDIR/run           the run directory efipt qemu writes (-o)
# OUTDIR/vars.fd       a fresh copy of OVMF's variable store
# OUTDIR/debugcon.log  what efipt.efi printed (I/O port 0xE9, --debugcon)
# Exit status: efipt qemu's (124: the timeout struck).
set -u
efipt=$1 esp=$2 out=$3 limit=$4
shift 4
code=${OVMF_CODE:-/usr/share/OVMF/OVMF_CODE_4M.fd}
[ -f "$code" ] || { echo "qemu_esp.sh: $code missing (Debian package ovmf)" >&2; exit 2; }
mkdir -p "$out"
cp "${OVMF_VARS:-/usr/share/OVMF/OVMF_VARS_4M.fd}" "$out/vars.fd"
# shellcheck disable=SC2086
exec timeout --kill-after=5 "$limit" "$efipt" qemu -o "$out/run" "$@" -- \
	-machine q35 -m 512 -smp 1 -accel tcg -cpu max -display none -nodefaults -no-reboot \
	-net none -drive if=pflash,format=raw,unit=0,readonly=on,file="$code" \
	-drive if=pflash,format=raw,unit=1,file="$out/vars.fd" \
	-drive format=raw,file="$esp" -device isa-debug-exit,iobase=0xf4,iosize=0x04 \
	-debugcon file:"$out/debugcon.log" -global isa-debugcon.iobase=0xe9 ${QEMU_EXTRA:-} </dev/null
