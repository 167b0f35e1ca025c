#!/bin/sh
# Install the Debian packages efipt needs to build, test and boot, if missing.
# Idempotent: does nothing when every package is present. Uses sudo when not root.
set -eu
PKGS="gcc make binutils gnu-efi ovmf qemu-system-x86 mtools dosfstools \
libipt-dev libzydis-dev libjansson-dev libdw-dev liblzma-dev clang lld libclang-rt-14-dev fdisk systemd-boot-efi grub-efi-amd64-bin \
shim-unsigned ipxe memtest86+ lcov \
nasm acpica-tools uuid-dev python3 dpkg-dev patch"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "efipt: installing missing Debian packages:$missing" >&2
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends $missing
