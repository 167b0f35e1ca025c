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
# Debian 12 or 13 that has that upstream version; a QEMU Debian does not
# have (Ubuntu's) gets the header of one Debian has with the same plugin
# API version, which declares the same functions. Nothing is fetched again
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
# The plugin API version of a QEMU release (qemu-plugin.h's notes): 1 up to
# 8.2, 2 in 9.0, 3 in 9.1, 4 from 9.2 to 10.0; newer ones are not known.
api_of() {
	echo "$1" | sed 's/^[0-9]*://' | awk -F'[.+~-]' '{
		v = $1 * 100 + $2
		print v < 702 ? "old" : v < 900 ? 1 : v < 901 ? 2 : v < 902 ? 3 : v <= 1000 ? 4 : "new" }'
}
api=$(api_of "$src")
case $api in
old) die "QEMU $src is older than 7.2, the oldest QEMU efipt's plugins support (plugin API 1)" ;;
new) die "QEMU $src is newer than efipt's plugins know (plugin API 1, QEMU 7.2, to 4, QEMU 10.0)" ;;
esac
ds=$(dirname "$0")/../mk/debian-source.sh
if ! tarball=$(sh "$ds" --orig qemu "$src" "$p" 2>"$p.err"); then
	# A QEMU Debian does not have (another distribution's): the header of a
	# QEMU Debian has with the same plugin API declares the same functions.
	cat "$p.err" >&2
	same=$(apt-cache -o Dir::State="$p" -o Dir::State::Lists="$p/lists" -o Dir::Cache="$p/cache" \
		-o Dir::Etc::SourceList="$p/etc/sources.list" -o Dir::Etc::SourceParts=/nonexistent \
		-q showsrc qemu 2>/dev/null | sed -n 's/^Version: //p' |
		while read -r v; do [ "$(api_of "$v")" = "$api" ] && echo "$v"; done | sort -V | tail -n 1)
	[ -n "$same" ] || die "no QEMU source in Debian 12 or 13 has plugin API $api (QEMU $src)"
	echo "get-plugin-header.sh: QEMU $src: taking the header of Debian's QEMU $same (plugin API $api too)" >&2
	tarball=$(sh "$ds" --orig qemu "$same" "$p") || exit 1
fi
rm -f "$p.err"
tmp=$out/qemu/qemu-plugin.h.tmp
tar -xOf "$tarball" --wildcards '*/include/qemu/qemu-plugin.h' >"$tmp" 2>"$p/tar.log" && [ -s "$tmp" ] ||
	{ rm -f "$tmp"; die "include/qemu/qemu-plugin.h not found in $tarball: $(head -c 300 "$p/tar.log")"; }
grep -q QEMU_PLUGIN_VERSION "$tmp" || { rm -f "$tmp"; die "$tarball: qemu-plugin.h has no QEMU_PLUGIN_VERSION"; }
mv "$tmp" "$hdr"
echo "$src" >"$out/qemu-version"
