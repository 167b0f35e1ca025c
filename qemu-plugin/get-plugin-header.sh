#!/bin/sh
# Fetch qemu-plugin.h for the installed QEMU from Debian's qemu source
# package (Debian's binary packages do not ship it), into OUTDIR:
#
#   qemu-plugin/get-plugin-header.sh OUTDIR
#
# leaves OUTDIR/qemu/qemu-plugin.h (include it as <qemu/qemu-plugin.h>) and
# OUTDIR/qemu-version (the Debian version it came from). mk/debian-source.sh
# downloads the source with a private apt state under OUTDIR/aptsrc: the
# system's apt setup is untouched.
# Nothing is fetched again while the header matches the installed version.
# Exit status 0 with the header in place, 1 with a message on stderr.
set -u
out=$1
die() { echo "get-plugin-header.sh: $*" >&2; exit 1; }
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 not installed (Debian package qemu-system-x86)"
ver=$(dpkg-query -W -f='${Version}' qemu-system-x86 2>/dev/null) ||
	die "cannot read the version of Debian package qemu-system-x86"
# a binary-only rebuild (+bN) has the source of the version before it
src=$(echo "$ver" | sed 's/+b[0-9]*$//')
hdr=$out/qemu/qemu-plugin.h
if [ -f "$hdr" ] && [ "$(cat "$out/qemu-version" 2>/dev/null)" = "$src" ]; then
	exit 0
fi
mkdir -p "$out/qemu" || die "cannot create $out/qemu"
# the source package, through a private apt state in OUTDIR/aptsrc
p=$out/aptsrc
sh "$(dirname "$0")/../mk/debian-source.sh" qemu "$src" "$p" >/dev/null || exit 1
tarball=$(ls "$p"/src/qemu_*.orig.tar.* 2>/dev/null | head -n 1)
[ -n "$tarball" ] || die "no qemu_*.orig.tar.* in $p/src after apt-get source"
tmp=$out/qemu/qemu-plugin.h.tmp
tar -xOf "$tarball" --wildcards '*/include/qemu/qemu-plugin.h' >"$tmp" 2>"$p/tar.log" && [ -s "$tmp" ] ||
	{ rm -f "$tmp"; die "include/qemu/qemu-plugin.h not found in $tarball: $(head -c 300 "$p/tar.log")"; }
grep -q QEMU_PLUGIN_VERSION "$tmp" || { rm -f "$tmp"; die "$tarball: qemu-plugin.h has no QEMU_PLUGIN_VERSION"; }
mv "$tmp" "$hdr"
echo "$src" >"$out/qemu-version"
