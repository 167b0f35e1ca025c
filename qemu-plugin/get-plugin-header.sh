#!/bin/sh
# Fetch qemu-plugin.h for a QEMU from Debian's qemu source package (Debian's
# binary packages do not ship it), into OUTDIR:
#
#   qemu-plugin/get-plugin-header.sh OUTDIR [VERSION]
#
# VERSION is the Debian version of that QEMU (default: the installed
# qemu-system-x86's). Leaves OUTDIR/qemu/qemu-plugin.h (include it as
# <qemu/qemu-plugin.h>) and OUTDIR/qemu-version (the version it came
# from). Only the upstream tarball is needed (the header is QEMU's own):
# mk/debian-source.sh --orig downloads it with a private apt state under
# OUTDIR/aptsrc (the system's apt setup is untouched), from any suite of
# Debian 12 or 13 that has that upstream version. Nothing is fetched again
# while the header matches the version. Exit status 0 with the header in
# place, 1 with a message on stderr.
set -u
[ $# -ge 1 ] || { echo "usage: qemu-plugin/get-plugin-header.sh OUTDIR [VERSION]" >&2; exit 1; }
out=$1
die() { echo "get-plugin-header.sh: $*" >&2; exit 1; }
if [ $# -ge 2 ]; then
	ver=$2
else
	command -v qemu-system-x86_64 >/dev/null ||
		die "qemu-system-x86_64 not installed (Debian package qemu-system-x86)"
	ver=$(dpkg-query -W -f='${Version}' qemu-system-x86 2>/dev/null) ||
		die "cannot read the version of Debian package qemu-system-x86"
fi
# a binary-only rebuild (+bN) has the source of the version before it
src=$(echo "$ver" | sed 's/+b[0-9]*$//')
hdr=$out/qemu/qemu-plugin.h
if [ -f "$hdr" ] && [ "$(cat "$out/qemu-version" 2>/dev/null)" = "$src" ]; then
	exit 0
fi
mkdir -p "$out/qemu" || die "cannot create $out/qemu"
p=$out/aptsrc
tarball=$(sh "$(dirname "$0")/../mk/debian-source.sh" --orig qemu "$src" "$p") || exit 1
tmp=$out/qemu/qemu-plugin.h.tmp
tar -xOf "$tarball" --wildcards '*/include/qemu/qemu-plugin.h' >"$tmp" 2>"$p/tar.log" && [ -s "$tmp" ] ||
	{ rm -f "$tmp"; die "include/qemu/qemu-plugin.h not found in $tarball: $(head -c 300 "$p/tar.log")"; }
grep -q QEMU_PLUGIN_VERSION "$tmp" || { rm -f "$tmp"; die "$tarball: qemu-plugin.h has no QEMU_PLUGIN_VERSION"; }
mv "$tmp" "$hdr"
echo "$src" >"$out/qemu-version"
