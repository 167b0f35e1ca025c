#!/bin/sh
# Debian's edk2 source, ready to build with, for efipt's EDK2 builds (the
# symbol fixture, tests/data/edk2/make_fixture.sh; OVMF with EfiptPkg,
# edk2/ovmf/build.sh):
#
#   mk/edk2-source.sh WORKDIR
#
# The edk2 SOURCE package of the installed ovmf package's version
# (dpkg-query) comes through mk/debian-source.sh (a private apt state in
# WORKDIR/apt; the system's apt setup is untouched), is unpacked with its
# Debian patches into WORKDIR/src, and its BaseTools are built there. Each
# step is done once: a later call finds it done. Prints WORKDIR/src.
# Needs nasm, gcc, make, python3, dpkg-source, uuid-dev (mk/deps.sh).
# Exit status 1, with the reason, when a step fails (the source needs
# Debian's archive the first time).
set -eu
[ $# -eq 1 ] || { echo "usage: mk/edk2-source.sh WORKDIR" >&2; exit 1; }
top=$(cd "$(dirname "$0")/.." && pwd)
die() { echo "edk2-source.sh: $*" >&2; exit 1; }
for t in nasm gcc make python3 dpkg-source; do
	command -v $t >/dev/null || die "$t not installed (Debian packages nasm, gcc, make, python3, dpkg-dev)"
done
ver=$(dpkg-query -W -f='${Version}' ovmf 2>/dev/null) ||
	die "cannot read the version of Debian package ovmf (is it installed?)"
mkdir -p "$1"
work=$(cd "$1" && pwd)
src=$work/src
if [ ! -f "$src/.efipt-version" ] || [ "$(cat "$src/.efipt-version")" != "$ver" ]; then
	dsc=$(sh "$top/mk/debian-source.sh" edk2 "$ver" "$work/apt") || exit 1
	rm -rf "$src" "$src.tmp"
	dpkg-source -x "$dsc" "$src.tmp" >"$work/dpkg-source.log" 2>&1 ||
		die "dpkg-source -x $dsc failed: $(tail -n 3 "$work/dpkg-source.log")"
	mv "$src.tmp" "$src"
	echo "$ver" >"$src/.efipt-version"
fi
if [ ! -f "$src/.efipt-basetools" ]; then
	echo "edk2-source.sh: building EDK2's BaseTools (about 30 s)" >&2
	nice make -C "$src/BaseTools" -j2 >"$work/basetools.log" 2>&1 ||
		die "BaseTools did not build: $(tail -n 5 "$work/basetools.log")"
	touch "$src/.efipt-basetools"
fi
echo "$src"
