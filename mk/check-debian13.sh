#!/bin/sh
# The README's two commands on a fresh Debian 13, as a new user would run
# them (make check-debian13):
#
#   sh mk/check-debian13.sh [DIR]
#
# makes a minimal Debian 13 (trixie) root in DIR (default build/debian13)
# with debootstrap from Debian's archive, installs what a user has before
# typing make (make, git), clones this repository into it (the committed
# HEAD), and runs `make run` and then `make test` there (chroot, as root:
# mk/deps.sh installs the rest with apt-get), with /proc, /sys and /dev
# mounted, unmounted before the root is deleted. Output: DIR.log (each
# command's whole output) and, on stdout, how each ended with make test's
# "N passed, N failed". KEEP=1 keeps the root (and its mounts undone) to
# look into; debootstrap's downloads stay in DIR.cache for the next time.
# TESTS=PATTERN runs only the tests whose names contain PATTERN (make test
# TESTS=PATTERN), to look again at what failed without a whole run.
# Root is needed (debootstrap, chroot, mount). Exit status: 0 when both
# commands succeed, 1 otherwise, 2 when the root could not be made.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$top/build/debian13}
say() { echo "check-debian13: $*"; }
[ "$(id -u)" -eq 0 ] || { say "needs root (debootstrap, chroot, mount)"; exit 2; }
command -v debootstrap >/dev/null || { say "debootstrap missing (mk/deps.sh debootstrap)"; exit 2; }
mkdir -p "$(dirname "$dir")"
# absolute: debootstrap refuses a relative --cache-dir
dir=$(cd "$(dirname "$dir")" && pwd)/$(basename "$dir")
log=$dir.log
cache=$dir.cache
mkdir -p "$cache"

mounted=""
undo() {
	for m in $mounted; do
		umount -R "$dir/$m" 2>/dev/null || umount -lR "$dir/$m" 2>/dev/null
	done
	mounted=""
	# never delete through a mount still there
	if grep -q " $dir/" /proc/mounts; then
		say "mounts under $dir remain: not deleting it"
		return
	fi
	[ -n "${KEEP:-}" ] || rm -rf "$dir"
}
trap undo EXIT
trap 'exit 130' INT TERM HUP

rm -rf "$dir"
: >"$log"
start=$(date +%s)
say "debootstrap --variant=minbase trixie $dir (log: $log)"
if ! debootstrap --variant=minbase --cache-dir="$cache" trixie "$dir" \
	http://deb.debian.org/debian >>"$log" 2>&1; then
	say "debootstrap failed: $(tail -n 3 "$log")"
	exit 2
fi
for m in proc sys dev; do
	mkdir -p "$dir/$m"
	case $m in
	proc) mount -t proc proc "$dir/proc" ;;
	sys) mount --rbind /sys "$dir/sys" ;;
	dev) mount --rbind /dev "$dir/dev" ;;
	esac || { say "cannot mount /$m in $dir"; exit 2; }
	mounted="$m $mounted"
done
cp /etc/resolv.conf "$dir/etc/resolv.conf" 2>/dev/null
in_root() {
	chroot "$dir" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LANG=C.UTF-8 TERM=dumb sh -c "$1"
}
say "apt-get install make git (what a user has before typing make)"
if ! in_root 'apt-get update -q && apt-get install -y -q --no-install-recommends make git ca-certificates' \
	>>"$log" 2>&1; then
	say "apt-get install make git failed: $(tail -n 3 "$log")"
	exit 2
fi
git clone -q "$top" "$dir/root/efipt" >>"$log" 2>&1 || { say "git clone of $top failed"; exit 2; }
say "cloned $(git -C "$dir/root/efipt" log -1 --format='%h %s' | cut -c1-70)"
rc=0
for cmd in "make run" "make test${TESTS:+ TESTS=$TESTS}"; do
	t0=$(date +%s)
	echo "== $cmd" >>"$log"
	in_root "cd /root/efipt && $cmd" >"$dir.out" 2>&1
	r=$?
	cat "$dir.out" >>"$log"
	secs=$(($(date +%s) - t0))
	last=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$dir.out" | tail -n 1)
	say "$cmd: exit $r in ${secs}s${last:+: $last}"
	if [ "$r" -ne 0 ]; then
		rc=1
		grep -E '^ *not ok ' "$dir.out" | head -n 40 | sed 's/^ */    /'
		[ -n "$last" ] || tail -n 15 "$dir.out" | sed 's/^/    /'
	fi
done
rm -f "$dir.out"
say "Debian 13 $(cat "$dir/etc/debian_version" 2>/dev/null): done in $(($(date +%s) - start))s; whole output in $log"
exit $rc
