#!/bin/sh
# OVMF (OvmfPkgX64, DEBUG, GCC5) with EfiptPkg: the worked example of
# docs/edk2.md, and the firmware efipt's package tests boot.
#
#   sh edk2/ovmf/build.sh WORKDIR        (or: make ovmf-efipt)
#
# WORKDIR/src is Debian's edk2 source with its BaseTools (mk/edk2-source.sh,
# shared with the symbol fixture). OvmfPkg is copied to WORKDIR/ovmf/OvmfPkg
# and its OvmfPkgX64.dsc/.fdf get the lines of edk2/ovmf/OvmfPkgX64.patch
# (the lines docs/edk2.md shows; line ends made LF first); Debian's tree is
# not changed. The build (PACKAGES_PATH: that copy, Debian's tree, efipt's
# edk2/) runs in WORKDIR/ovmf with -n 2, without the UEFI Shell (the tests
# boot from an ESP) and iSCSI (the only module that needs OpenSSL, the
# largest library: 1115 files to compile instead of 1583), and with
# PcdEfiptSynthetic=TRUE and PcdEfiptEmulatedCaps=TRUE: this is a test
# build, it can write a SYNTHETIC trace (--source synthetic) and, under TCG,
# program PT from a CPU profile for efipt-qemu.so start=guest. EDK2 builds incrementally: a
# second run rebuilds only what changed.
#
# Leaves WORKDIR/ovmf/OVMF_CODE.fd and OVMF_VARS.fd (renamed into place),
# the build tree for --symbols in WORKDIR/ovmf/Build/OvmfX64/DEBUG_GCC5,
# and the log in WORKDIR/ovmf/build.log. Exit status 0; 3 when Debian's
# edk2 source cannot be had (no network: the tests skip); 1 on any other
# failure (the build itself: the tests fail).
set -eu
[ $# -eq 1 ] || { echo "usage: edk2/ovmf/build.sh WORKDIR" >&2; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
die() { echo "edk2/ovmf/build.sh: $*" >&2; exit 1; }
command -v iasl >/dev/null || die "iasl not installed (Debian package acpica-tools)"
start=$(date +%s)
src=$(sh "$top/mk/edk2-source.sh" "$1") || exit 3
work=$(cd "$1" && pwd)/ovmf
mkdir -p "$work"
# the copy of OvmfPkg, its two files patched afresh when the patch changes
# (the other files keep their times: EDK2 rebuilds only what changed)
sum=$(cksum <"$here/OvmfPkgX64.patch")
if [ ! -d "$work/OvmfPkg" ]; then
	rm -rf "$work/OvmfPkg.tmp"
	cp -r "$src/OvmfPkg" "$work/OvmfPkg.tmp"
	mv "$work/OvmfPkg.tmp" "$work/OvmfPkg"
fi
if [ ! -f "$work/OvmfPkg/.efipt-patch" ] || [ "$(cat "$work/OvmfPkg/.efipt-patch")" != "$sum" ]; then
	rm -f "$work/OvmfPkg/.efipt-patch"
	for f in OvmfPkgX64.dsc OvmfPkgX64.fdf; do
		sed 's/\r$//' "$src/OvmfPkg/$f" >"$work/OvmfPkg/$f"
	done
	patch -s -p2 -d "$work/OvmfPkg" --no-backup-if-mismatch -f \
		<"$here/OvmfPkgX64.patch" >"$work/patch.log" 2>&1 ||
		die "edk2/ovmf/OvmfPkgX64.patch does not apply to $(cat "$src/.efipt-version")'s OvmfPkg: $(tail -n 3 "$work/patch.log")"
	echo "$sum" >"$work/OvmfPkg/.efipt-patch"
fi
echo "edk2/ovmf/build.sh: building OVMF with EfiptPkg in $work (log: build.log)" >&2
WORKSPACE=$work PACKAGES_PATH=$work:$src:$top/edk2 EDK_TOOLS_PATH=$src/BaseTools nice bash -c '
	cd "$WORKSPACE" && . "$EDK_TOOLS_PATH/../edksetup.sh" BaseTools >/dev/null &&
	build -a X64 -t GCC5 -b DEBUG -n 2 -p OvmfPkg/OvmfPkgX64.dsc -DFD_SIZE_4MB \
		-DBUILD_SHELL=FALSE -DNETWORK_ISCSI_ENABLE=FALSE \
		--pcd gEfiptPkgTokenSpaceGuid.PcdEfiptSynthetic=TRUE \
		--pcd gEfiptPkgTokenSpaceGuid.PcdEfiptEmulatedCaps=TRUE' \
	>"$work/build.log" 2>&1 || die "the EDK2 build failed: $(grep -m 5 -E 'error|Error' "$work/build.log")"
fv=$work/Build/OvmfX64/DEBUG_GCC5/FV
for f in OVMF_CODE.fd OVMF_VARS.fd; do
	cp "$fv/$f" "$work/$f.tmp"
	mv "$work/$f.tmp" "$work/$f"
done
echo "edk2/ovmf/build.sh: $work/OVMF_CODE.fd built in $(($(date +%s) - start)) s" >&2
