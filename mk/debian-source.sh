#!/bin/sh
# Download a Debian source package through a private apt state, so the
# system's apt setup is untouched:
#
#   mk/debian-source.sh [--orig] PACKAGE VERSION DIR
#
# leaves PACKAGE_*.dsc and its tarballs in DIR/src (apt's state is kept in
# DIR: lists, cache, etc/sources.list) and prints the path of the .dsc on
# stdout. --orig: only the upstream tarball is needed (PACKAGE_UPSTREAM.orig
# .tar.*, its path printed): where the archive no longer serves VERSION's
# .dsc (a revision superseded by a point release or a security update, a
# backport replaced) the tarball of another revision of the same upstream
# version is the same file, and is taken. The deb-src lists are those of
# Debian 12 and 13 and their updates, security and backports suites, so the
# version installed from any of them is found. Nothing is fetched again
# while DIR/src holds what is asked for. A binary-only rebuild's version
# (+bN) is mapped to its source version. Exit status 0 with the files in
# place, 1 with a message on stderr.
set -u
orig=""
[ "${1:-}" = "--orig" ] && orig=1 && shift
[ $# -eq 3 ] || { echo "usage: mk/debian-source.sh [--orig] PACKAGE VERSION DIR" >&2; exit 1; }
pkg=$1
ver=$(echo "$2" | sed 's/+b[0-9]*$//')
die() { echo "debian-source.sh: $pkg=$ver: $*" >&2; exit 1; }
mkdir -p "$3" || die "cannot create $3"
# apt takes Dir:: paths relative to its root: give it absolute ones
p=$(cd "$3" && pwd)
# the .dsc name has the version without its epoch; the upstream tarball's
# has neither the epoch nor the Debian revision
noepoch=$(echo "$ver" | sed 's/^[0-9]*://')
upstream=$(echo "$noepoch" | sed 's/-[^-]*$//')
dsc=$p/src/${pkg}_$noepoch.dsc
have_orig() { ls "$p/src/${pkg}_$upstream.orig.tar."* 2>/dev/null | head -n 1; }
if [ -n "$orig" ] && [ -n "$(have_orig)" ]; then
	have_orig
	exit 0
fi
if [ -z "$orig" ] && [ -f "$dsc" ]; then
	echo "$dsc"
	exit 0
fi
mkdir -p "$p/src" || die "cannot create $p/src"
. "$(dirname "$0")/private-apt.sh"
papt_open "$p" "deb-src debian bookworm" "deb-src debian bookworm-updates" \
	"deb-src debian bookworm-backports" "deb-src debian-security bookworm-security" \
	"deb-src debian trixie" "deb-src debian trixie-updates" \
	"deb-src debian trixie-backports" "deb-src debian-security trixie-security"
o=$papt
# fetch_src [--tar-only] VERSION: apt-get source --download-only into DIR/src
fetch_src() {
	# shellcheck disable=SC2086
	(cd "$p/src" && apt-get $o source --download-only "$@") >>"$p/source.log" 2>&1
}
: >"$p/source.log"
if [ -z "$orig" ]; then
	fetch_src "$pkg=$ver" || die "apt-get source failed: $(tail -n 3 "$p/source.log")"
	[ -f "$dsc" ] || die "no $dsc after apt-get source (see $p/source.log)"
	echo "$dsc"
	exit 0
fi
# --orig: this version's tarballs, else those of a revision of the same
# upstream version that the lists still have
if ! fetch_src --tar-only "$pkg=$ver"; then
	# shellcheck disable=SC2086
	other=$(apt-cache $o showsrc "$pkg" 2>/dev/null | sed -n 's/^Version: //p' |
		while read -r v; do
			u=$(echo "$v" | sed 's/^[0-9]*://; s/-[^-]*$//')
			[ "$u" = "$upstream" ] && echo "$v"
		done | head -n 1)
	[ -n "$other" ] ||
		die "no suite of Debian 12 or 13 has the source of $pkg $upstream (apt-get source: $(tail -n 1 "$p/source.log"))"
	echo "debian-source.sh: $pkg=$ver is no longer served; its upstream tarball comes with $other" >&2
	fetch_src --tar-only "$pkg=$other" || die "apt-get source $pkg=$other failed: $(tail -n 3 "$p/source.log")"
fi
[ -n "$(have_orig)" ] || die "no ${pkg}_$upstream.orig.tar.* after apt-get source (see $p/source.log)"
have_orig
