#!/bin/sh
# Build an EFI System Partition holding efipt.efi, as a directory tree or a
# FAT image, without root, loop devices or mounting (mkfs.vfat + mtools).
#
#   ovmf/mkesp.sh --image FILE [--size MiB] [--args "ARGS"] [--add SRC:ESP\PATH]...
#   ovmf/mkesp.sh --dir DIR    [--args "ARGS"] [--add SRC:ESP\PATH]...
#   ovmf/mkesp.sh --disk FILE  [same options as --image]
#
# --image writes a bare FAT32 file system (a "superfloppy"); --disk wraps it
# in a GPT disk image with one EFI System Partition at 1 MiB, which every
# UEFI firmware boots from USB: write it to a stick with dd.
#
# efipt.efi goes to \EFI\BOOT\BOOTX64.EFI (firmware boots it from removable
# media with no set-up) and to \efipt.efi (for the UEFI Shell). --args writes
# \EFI\BOOT\efipt.args, the command line used when booted without arguments.
# --no-fallback leaves out BOOTX64.EFI (to boot the firmware's UEFI Shell).
# --add copies SRC to the ESP path, written \EFI\tools\x.efi or EFI/tools/x.efi
# (directories are created).
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
efi=${EFIPT_EFI:-$here/build/efipt.efi}
image="" dir="" disk="" size=64 args="" adds="" fallback=1
while [ $# -gt 0 ]; do
	case "$1" in
	--image) image=$2; shift 2 ;;
	--dir) dir=$2; shift 2 ;;
	--disk) disk=$2; shift 2 ;;
	--size) size=$2; shift 2 ;;
	--args) args=$2; shift 2 ;;
	--no-fallback) fallback=0; shift ;;
	--add)
		# printf, not echo: the paths hold backslashes
		case "$2" in *:?*) ;; *) printf "mkesp.sh: --add needs SRC:ESP_PATH, got '%s'\n" "$2" >&2; exit 2 ;; esac
		# the ESP path as the firmware writes it (\EFI\x) or as a host path
		src=${2%%:*} dst=$(printf '%s\n' "${2#*:}" | tr '\\' / | sed 's|^/*||')
		[ -f "$src" ] || { printf 'mkesp.sh: --add %s: no file %s\n' "$2" "$src" >&2; exit 2; }
		[ -n "$dst" ] || { printf "mkesp.sh: --add %s: no ESP path after the ':'\n" "$2" >&2; exit 2; }
		adds="$adds
$src:$dst"
		shift 2 ;;
	-h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "mkesp.sh: unknown option $1" >&2; exit 2 ;;
	esac
done
[ -f "$efi" ] || { echo "mkesp.sh: $efi not built (run make)" >&2; exit 1; }
[ -n "$image$dir$disk" ] || { echo "mkesp.sh: need --image FILE, --disk FILE or --dir DIR" >&2; exit 2; }

if [ -n "$dir" ]; then
	mkdir -p "$dir/EFI/BOOT"
	[ "$fallback" -eq 0 ] || cp "$efi" "$dir/EFI/BOOT/BOOTX64.EFI"
	cp "$efi" "$dir/efipt.efi"
	[ -z "$args" ] || printf '%s\n' "$args" >"$dir/EFI/BOOT/efipt.args"
	printf '%s\n' "$adds" | while IFS=: read -r src dst; do
		[ -n "$src" ] || continue
		mkdir -p "$dir/$(dirname "$dst")"
		cp "$src" "$dir/$dst"
	done
	echo "ESP tree in $dir: copy its contents to a FAT32-formatted USB stick."
	exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[ -n "$disk" ] && image=$tmp/esp.fat
rm -f "$image"
mkfs.vfat -C -n EFIPT -F 32 "$image" $((size * 1024)) >/dev/null
export MTOOLS_SKIP_CHECK=1
mmd -i "$image" ::/EFI ::/EFI/BOOT
[ "$fallback" -eq 0 ] || mcopy -i "$image" "$efi" ::/EFI/BOOT/BOOTX64.EFI
mcopy -i "$image" "$efi" ::/efipt.efi
if [ -n "$args" ]; then
	printf '%s\n' "$args" >"$tmp/efipt.args"
	mcopy -i "$image" "$tmp/efipt.args" ::/EFI/BOOT/efipt.args
fi
printf '%s\n' "$adds" | while IFS=: read -r src dst; do
	[ -n "$src" ] || continue
	# each missing directory on the way, outermost first
	rest=$(dirname "$dst") p=""
	[ "$rest" != "." ] || rest=""
	while [ -n "$rest" ]; do
		p=$p/${rest%%/*}
		mmd -i "$image" -D s "::$p" 2>/dev/null || true
		case "$rest" in */*) rest=${rest#*/} ;; *) rest="" ;; esac
	done
	mcopy -o -i "$image" "$src" "::/$dst"
done

if [ -n "$disk" ]; then
	# GPT: 1 MiB before the partition (MBR, header, entries), 1 MiB after
	# (backup entries and header). Partition type: EFI System.
	rm -f "$disk"
	truncate -s $(((size + 2) * 1024 * 1024)) "$disk"
	printf 'label: gpt\nstart=2048, size=%d, type=C12A7328-F81F-11D2-BA4B-00A0C93EC93B, name="EFIPT"\n' \
		$((size * 2048)) | sfdisk --quiet "$disk"
	dd if="$image" of="$disk" bs=1M seek=1 conv=notrunc status=none
	echo "GPT disk image $disk: write it to a USB stick with dd (the ESP is at 1 MiB)."
fi
