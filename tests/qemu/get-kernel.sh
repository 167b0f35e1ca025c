#!/bin/sh
# Debian's kernel (the package linux-image-amd64 depends on) and
# busybox-static for the flight recorder tests, without installing them:
# apt-get download, then only the files the tests use out of the packages
# (dpkg-deb --fsys-tarfile | tar). Fetched once per kernel version.
#
#   tests/qemu/get-kernel.sh OUTDIR
#
# OUTDIR/VERSION/vmlinuz      the kernel (its EFI stub is what efipt.efi starts)
# OUTDIR/VERSION/config       its configuration
# OUTDIR/VERSION/modules/     efivarfs and the virtio block driver (modules in
#                             Debian's build) for the Linux reader's initramfs
# OUTDIR/busybox              busybox-static
# OUTDIR/version              VERSION, written last: the cache is complete
# Exit status 0, or 1 (no network, no such package: the tests skip).
set -eu
mkdir -p "$1"
out=$(cd "$1" && pwd)
pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
[ -n "$pkg" ] || { echo "get-kernel.sh: apt knows no linux-image-amd64 (apt-get update?)" >&2; exit 1; }
ver=${pkg#linux-image-}
if [ -f "$out/version" ] && [ "$(cat "$out/version")" = "$ver" ] && [ -f "$out/$ver/vmlinuz" ]; then
	exit 0
fi
tmp=$(mktemp -d "$out/.get.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && apt-get download -q "$pkg" busybox-static >/dev/null 2>"$tmp/apt.err") || {
	echo "get-kernel.sh: apt-get download $pkg busybox-static failed:" >&2
	grep -v '^W: Download is performed unsandboxed' "$tmp/apt.err" >&2 || true
	exit 1
}
mods="kernel/fs/efivarfs/efivarfs.ko kernel/drivers/virtio/virtio.ko \
kernel/drivers/virtio/virtio_ring.ko kernel/drivers/virtio/virtio_pci_legacy_dev.ko \
kernel/drivers/virtio/virtio_pci_modern_dev.ko kernel/drivers/virtio/virtio_pci.ko \
kernel/drivers/block/virtio_blk.ko"
want="./boot/vmlinuz-$ver ./boot/config-$ver"
for m in $mods; do
	want="$want ./lib/modules/$ver/$m"
done
mkdir -p "$tmp/x"
# shellcheck disable=SC2086
dpkg-deb --fsys-tarfile "$tmp"/linux-image-*.deb | tar -x -C "$tmp/x" $want
dpkg-deb --fsys-tarfile "$tmp"/busybox-static_*.deb | tar -x -C "$tmp/x" ./bin/busybox
rm -rf "$out/$ver"
mkdir -p "$out/$ver/modules"
mv "$tmp/x/boot/vmlinuz-$ver" "$out/$ver/vmlinuz"
mv "$tmp/x/boot/config-$ver" "$out/$ver/config"
for m in $mods; do
	mv "$tmp/x/lib/modules/$ver/$m" "$out/$ver/modules/"
done
mv "$tmp/x/bin/busybox" "$out/busybox"
echo "$ver" >"$out/version"
echo "get-kernel.sh: $pkg and busybox-static in $out"
