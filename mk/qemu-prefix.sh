#!/bin/sh
# A second QEMU beside the system's, from Debian's .deb files, for testing
# the plugin against another plugin API; the system QEMU is untouched:
#
#   mk/qemu-prefix.sh DIR SUITE
#
# downloads qemu-system-x86, qemu-system-common and qemu-system-data as
# SUITE (e.g. bookworm-backports) has them, with a private apt state in
# DIR/apt (apt-get download: nothing is installed), unpacks them into
# DIR/root (dpkg-deb -x) and leaves DIR/bin/qemu-system-x86_64, which runs
# that QEMU with its own data files and modules, and DIR/version, its
# Debian version. The libraries it needs must be the system's: any it
# lacks are named. Nothing is fetched again while DIR/version names what
# SUITE has. Exit status 0 with DIR/bin/qemu-system-x86_64 working, 1 with
# a message on stderr.
set -u
[ $# -eq 2 ] || { echo "usage: mk/qemu-prefix.sh DIR SUITE" >&2; exit 1; }
suite=$2
die() { echo "qemu-prefix.sh: $suite: $*" >&2; exit 1; }
mkdir -p "$1" || die "cannot create $1"
d=$(cd "$1" && pwd)
p=$d/apt
release=${suite%%-*}
. "$(dirname "$0")/private-apt.sh"
papt_open "$p" "deb debian $release" "deb debian $suite"
o=$papt
# the version SUITE has (its pin is below the release's: ask for it)
# shellcheck disable=SC2086
ver=$(apt-cache $o madison qemu-system-x86 2>/dev/null | awk -F'|' -v s="$suite/" \
	'index($3, s) { gsub(/ /, "", $2); print $2; exit }')
[ -n "$ver" ] || die "no qemu-system-x86 in $suite (apt-cache madison: see $p/update.log)"
q=$d/bin/qemu-system-x86_64
if [ "$(cat "$d/version" 2>/dev/null)" = "$ver" ] && "$q" --version >/dev/null 2>&1; then
	exit 0
fi
rm -rf "$d/root" "$d/version" "$p/deb"
mkdir -p "$p/deb" "$d/root" "$d/bin"
# shellcheck disable=SC2086
(cd "$p/deb" && apt-get $o download qemu-system-x86="$ver" qemu-system-common="$ver" \
	qemu-system-data="$ver") >"$p/download.log" 2>&1 ||
	die "apt-get download of QEMU $ver failed: $(tail -n 3 "$p/download.log")"
for f in "$p"/deb/*.deb; do
	dpkg-deb -x "$f" "$d/root" || die "dpkg-deb -x $f failed"
done
bin=$d/root/usr/bin/qemu-system-x86_64
[ -x "$bin" ] || die "no usr/bin/qemu-system-x86_64 in the packages of $ver"
lost=$(ldd "$bin" 2>/dev/null | sed -n 's/^[[:space:]]*\([^ ]*\) => not found$/\1/p' | tr '\n' ' ')
[ -z "$lost" ] || die "QEMU $ver needs libraries this system lacks: $lost"
moddir=$(ls -d "$d"/root/usr/lib/*/qemu 2>/dev/null | head -n 1)
# QEMU's own data (option ROMs, keymaps) and modules, not the system QEMU's
cat >"$q" <<EOS
#!/bin/sh
# QEMU $ver from Debian's $suite, unpacked by mk/qemu-prefix.sh
QEMU_MODULE_DIR='${moddir:-$d/root}' exec '$bin' -L '$d/root/usr/share/qemu' "\$@"
EOS
chmod +x "$q"
"$q" --version >"$p/version.log" 2>&1 || die "$q --version fails: $(head -c 300 "$p/version.log")"
echo "$ver" >"$d/version"
