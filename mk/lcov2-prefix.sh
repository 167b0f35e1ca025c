#!/bin/sh
# lcov 2 beside the system's lcov 1, from Debian's .deb file, for checking
# efipt's tracefiles with lcov 2's genhtml (which checks their consistency):
#
#   mk/lcov2-prefix.sh DIR SUITE
#
# downloads the lcov package SUITE (e.g. trixie) has, with a private apt
# state in DIR/apt (apt-get download: nothing is installed), unpacks it into
# DIR/root (dpkg-deb -x) and leaves DIR/bin/genhtml and DIR/bin/lcov, which
# run that lcov with its own Perl modules and lcovrc, and DIR/version, its
# Debian version. The Perl modules it needs from elsewhere are the system's
# (mk/lcov2.mk installs them): any missing is named. Nothing is fetched
# again while DIR/version names what SUITE has. Exit status 0 with
# DIR/bin/genhtml working, 1 with a message on stderr.
set -u
[ $# -eq 2 ] || { echo "usage: mk/lcov2-prefix.sh DIR SUITE" >&2; exit 1; }
suite=$2
die() { echo "lcov2-prefix.sh: $suite: $*" >&2; exit 1; }
mkdir -p "$1" || die "cannot create $1"
d=$(cd "$1" && pwd)
p=$d/apt
. "$(dirname "$0")/private-apt.sh"
papt_open "$p" "deb debian $suite"
o=$papt
# shellcheck disable=SC2086
ver=$(apt-cache $o madison lcov 2>/dev/null | awk -F'|' '{ gsub(/ /, "", $2); print $2; exit }')
[ -n "$ver" ] || die "no lcov in $suite (apt-cache madison: see $p/update.log)"
g=$d/bin/genhtml
if [ "$(cat "$d/version" 2>/dev/null)" = "$ver" ] && "$g" --version >/dev/null 2>&1; then
	exit 0
fi
rm -rf "$d/root" "$d/version" "$p/deb"
mkdir -p "$p/deb" "$d/root" "$d/bin"
# shellcheck disable=SC2086
(cd "$p/deb" && apt-get $o download lcov="$ver") >"$p/download.log" 2>&1 ||
	die "apt-get download of lcov $ver failed: $(tail -n 3 "$p/download.log")"
dpkg-deb -x "$p"/deb/lcov_*.deb "$d/root" || die "dpkg-deb -x of lcov $ver failed"
[ -f "$d/root/usr/bin/genhtml" ] || die "no usr/bin/genhtml in lcov $ver"
# lcov 2 reads its modules from /usr/lib/lcov and its settings from
# /etc/lcovrc: the system's lcov 1 has those; these are lcov 2's own
for t in genhtml lcov; do
	cat >"$d/bin/$t" <<EOS
#!/bin/sh
# $t of lcov $ver from Debian's $suite, unpacked by mk/lcov2-prefix.sh
PERL5LIB='$d/root/usr/lib/lcov' exec perl '$d/root/usr/bin/$t' --config-file '$d/root/etc/lcovrc' "\$@"
EOS
	chmod +x "$d/bin/$t"
done
"$g" --version >"$p/version.log" 2>&1 || die "$g --version fails: $(head -c 300 "$p/version.log")"
echo "$ver" >"$d/version"
