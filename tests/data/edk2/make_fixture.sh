#!/bin/sh
# Real EDK2 build output as symbol fixtures for efipt's tests.
#
#   sh tests/data/edk2/make_fixture.sh [--rounds N | --variant NAME] [WORKDIR]
#   (or: make edk2-fixture)
#
# How the committed files were made: Debian's edk2 SOURCE package of the
# installed ovmf package's version, unpacked with its Debian patches and
# its BaseTools built in WORKDIR/src (mk/edk2-source.sh); then the
# platform of this folder (EfiptFixturePkg/EfiptFixture.dsc/.fdf: FixtureApp, the WatchdogTimer
# DXE driver and DxeCore in one FV) is built DEBUG with the
# GCC5 tool chain (Debian's gcc 12, as Debian builds ovmf: -Os, LTO) in
# /tmp/efipt-edk2-fixture, removed afterwards (so the build path the images
# record exists nowhere: tests see the moved-tree case whatever machine
# they run on). WORKDIR defaults to build/edk2.
#
# Copied here, keeping the build tree's layout below
# Build/EfiptFixture/DEBUG_GCC5 (so --symbols takes the folder as it would
# a real build directory):
#   X64/<module path>/DEBUG/NAME.efi    the PE image GenFw made
#   X64/<module path>/DEBUG/NAME.debug  the ELF with DWARF it was made from
#   X64/<module path>/DEBUG/NAME.map    GNU ld's link map
#   FV/Guid.xref                        FvFile GUID -> module name
#   build-path                          /tmp/efipt-edk2-fixture/Build/EfiptFixture/DEBUG_GCC5:
#                                       the prefix of every CodeView path the
#                                       images record (tests --path-map it here)
#   source-version                      the Debian edk2 version built
# With --rounds N, a second build of the application for efipt diff's
# tests: FixtureAppMain's FixtureRun loop runs N rounds instead of 8 (the
# one change, made in a copy of the package under WORKDIR/pkg); only the
# application's files are kept, in tests/data/edk2/RoundsN/Build/... (same
# layout).
# With --variant new-function, the application calls one function more,
# FixtureNew (a loop of 3 rounds, added before FixtureAppMain; its result
# stored in mSink), kept in tests/data/edk2/NewFunction/Build/...; with
# --variant removed-call, FixtureAppMain no longer calls FixtureFib (10) but
# adds 55, its value (the printed result is the same), kept in
# tests/data/edk2/RemovedCall/Build/... (efipt diff's tests: each the one
# change against the committed build).
# Nothing is stripped. Rebuilt, the .efi and .debug files come out byte for
# byte the same; the .map files differ in the names of GCC's temporary LTO
# objects only. Building takes a minute or more; the tests
# use the committed files and never run this.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
die() { echo "make_fixture.sh: $*" >&2; exit 1; }
rounds=""
variant=""
if [ "${1:-}" = "--rounds" ]; then
	rounds=${2:-}
	case "$rounds" in ''|*[!0-9]*) die "--rounds takes a number, not '$rounds'" ;; esac
	shift 2
elif [ "${1:-}" = "--variant" ]; then
	variant=${2:-}
	case "$variant" in new-function|removed-call) ;;
	*) die "--variant takes new-function or removed-call, not '$variant'" ;; esac
	shift 2
fi
work=${1:-$top/build/edk2}
ver=$(dpkg-query -W -f='${Version}' ovmf 2>/dev/null) ||
	die "cannot read the version of Debian package ovmf (is it installed?)"
src=$(sh "$top/mk/edk2-source.sh" "$work") || exit 1
work=$(cd "$work" && pwd)
ws=/tmp/efipt-edk2-fixture
rm -rf "$ws"
mkdir -p "$ws"
pkgs=$here
dest=$here
call="  Result = FixtureRun (FixtureDouble, 8) + FixtureFib (10);"
if [ -n "$rounds$variant" ]; then
	pkgs=$work/pkg
	rm -rf "$pkgs"
	mkdir -p "$pkgs"
	cp -r "$here/EfiptFixturePkg" "$pkgs/"
	app=$pkgs/EfiptFixturePkg/App/FixtureApp.c
	grep -qxF "$call" "$app" || die "FixtureApp.c: the line '$call' changed"
fi
if [ -n "$rounds" ]; then
	dest=$here/Rounds$rounds
	sed -i "s/FixtureRun (FixtureDouble, 8)/FixtureRun (FixtureDouble, $rounds)/" "$app"
elif [ "$variant" = removed-call ]; then
	dest=$here/RemovedCall
	# FixtureFib (10) is 55: the result, and so what Print does, stay the
	# same; FixtureFib stays defined, named once (-Wall -Werror: no unused
	# function), and is dropped by the compiler
	sed -i "s/^  Result = FixtureRun (FixtureDouble, 8) + FixtureFib (10);\$/  Result = FixtureRun (FixtureDouble, 8) + 55;\\n  (VOID)FixtureFib;/" "$app"
elif [ "$variant" = new-function ]; then
	dest=$here/NewFunction
	# its result goes to mSink, not into Result: what Print does stays the same
	sed -i "s/^  Result = FixtureRun (FixtureDouble, 8) + FixtureFib (10);\$/&\\n  mSink = FixtureNew (3);/" "$app"
	awk '/^EFI_STATUS$/ && !done {
		print "NOINLINE"; print "STATIC"; print "UINT32"; print "FixtureNew ("
		print "  IN UINT32  N"; print "  )"; print "{"; print "  UINT32  Sum;"; print ""
		print "  for (Sum = 0; N > 0; N--) {"; print "    Sum += N * mSink;"; print "  }"
		print ""; print "  return Sum;"; print "}"; print ""; done = 1 }
	{ print }' "$app" >"$app.new" && mv "$app.new" "$app"
fi
if [ -n "$rounds$variant" ] && cmp -s "$here/EfiptFixturePkg/App/FixtureApp.c" "$app"; then
	die "FixtureApp.c: the change was not made"
fi
# edksetup.sh is bash; it reads WORKSPACE, PACKAGES_PATH and EDK_TOOLS_PATH
WORKSPACE=$ws PACKAGES_PATH=$src:$pkgs EDK_TOOLS_PATH=$src/BaseTools nice bash -c '
	cd "$WORKSPACE" && . "$EDK_TOOLS_PATH/../edksetup.sh" BaseTools >/dev/null &&
	build -a X64 -t GCC5 -b DEBUG -n 2 -p EfiptFixturePkg/EfiptFixture.dsc' \
	>"$work/build.log" 2>&1 || die "EDK2 build failed: $(tail -n 8 "$work/build.log")"
b=$ws/Build/EfiptFixture/DEBUG_GCC5
out=$dest/Build/EfiptFixture/DEBUG_GCC5
tmp=$dest/Build.tmp
rm -rf "$tmp"
mkdir -p "$tmp/FV"
cp "$b/FV/Guid.xref" "$tmp/FV/"
(cd "$b" && find X64 -path '*/DEBUG/*' \( -name '*.efi' -o -name '*.debug' -o -name '*.map' \) |
	grep -v '/Library/' | grep "${rounds:+/FixtureApp/}${variant:+/FixtureApp/}" | sort) >"$work/files"
[ -s "$work/files" ] || die "no module output under $b/X64"
while read -r f; do
	mkdir -p "$tmp/$(dirname "$f")"
	cp "$b/$f" "$tmp/$f"
done <"$work/files"
echo "$b" >"$tmp/build-path"
echo "$(echo "$ver" | sed 's/+b[0-9]*$//')" >"$tmp/source-version"
rm -rf "$dest/Build"
mkdir -p "$(dirname "$out")"
mv "$tmp" "$out"
rm -rf "$ws"
echo "make_fixture.sh: $(wc -l <"$work/files") files in $out ($(du -sh "$out" | cut -f1))"
