#!/bin/sh
# Download a Debian source package through a private apt state, so the
# system's apt setup is untouched:
#
#   mk/debian-source.sh PACKAGE VERSION DIR
#
# leaves PACKAGE_*.dsc and its tarballs in DIR/src (apt's state is kept in
# DIR: lists, cache, etc/sources.list). Nothing is fetched again while
# DIR/src holds the .dsc of that version. A binary-only rebuild's version
# (+bN) is mapped to its source version. Prints the path of the .dsc on
# stdout. Exit status 0 with the files in place, 1 with a message on stderr.
set -u
[ $# -eq 3 ] || { echo "usage: mk/debian-source.sh PACKAGE VERSION DIR" >&2; exit 1; }
pkg=$1
ver=$(echo "$2" | sed 's/+b[0-9]*$//')
die() { echo "debian-source.sh: $pkg=$ver: $*" >&2; exit 1; }
mkdir -p "$3" || die "cannot create $3"
# apt takes Dir:: paths relative to its root: give it absolute ones
p=$(cd "$3" && pwd)
# the .dsc name has the version without its epoch
dsc=$p/src/${pkg}_$(echo "$ver" | sed 's/^[0-9]*://').dsc
if [ -f "$dsc" ]; then
	echo "$dsc"
	exit 0
fi
mkdir -p "$p/lists/partial" "$p/cache/archives/partial" "$p/etc" "$p/src"
key=/usr/share/keyrings/debian-archive-keyring.gpg
[ -f "$key" ] || die "$key missing (Debian package debian-archive-keyring)"
cat >"$p/etc/sources.list" <<EOS
deb-src [signed-by=$key] http://deb.debian.org/debian bookworm main
deb-src [signed-by=$key] http://deb.debian.org/debian bookworm-updates main
deb-src [signed-by=$key] http://deb.debian.org/debian-security bookworm-security main
EOS
o="-o Dir::State=$p -o Dir::State::Lists=$p/lists -o Dir::Cache=$p/cache"
o="$o -o Dir::Etc::SourceList=$p/etc/sources.list -o Dir::Etc::SourceParts=/nonexistent"
o="$o -o Debug::NoLocking=1 -q"
# shellcheck disable=SC2086
apt-get $o update >"$p/update.log" 2>&1 ||
	die "apt-get update of the deb-src lists failed (network?): $(tail -n 3 "$p/update.log")"
# shellcheck disable=SC2086
(cd "$p/src" && apt-get $o source --download-only "$pkg=$ver") >"$p/source.log" 2>&1 ||
	die "apt-get source failed: $(tail -n 3 "$p/source.log")"
[ -f "$dsc" ] || die "no $dsc after apt-get source (see $p/source.log)"
echo "$dsc"
