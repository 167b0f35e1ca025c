#!/bin/sh
# Install the Debian packages efipt needs to build, test and boot, if missing:
#
#   sh mk/deps.sh [PACKAGE...]      (PACKAGE: more, for one make target)
#
# Each need below names the packages that meet it, first choice first: the
# first one this system's archive offers is taken, so no release's version
# pin is needed (clang's runtimes: the unversioned package, else the one of
# the clang the archive has). A need no package meets is named with what it
# is for, and nothing is installed. One line per step on stderr; apt's own
# output goes to DEPS_LOG (build/deps.log) and is shown when apt fails.
# Idempotent: silent when every need is met. Uses sudo when not root.
set -u
log=${DEPS_LOG:-build/deps.log}
say() { echo "efipt deps: $*" >&2; }

# packages (alternatives separated by |) : what for
needs() {
	cat <<'EON'
gcc make binutils : building efipt.efi, efipt and the QEMU plugin
gnu-efi : the UEFI application's headers, crt0 and libraries
clang lld : the sanitized build (make SANITIZE=1) and the fuzz targets
libclang-rt-dev|libclang-rt-@CLANG@-dev : clang's ASan, UBSan and libFuzzer runtimes
libipt-dev : libipt, the reference decoder tests and benchmarks compare with
libzydis-dev : Zydis, the disassembler of efipt insn
libjansson-dev libdw-dev liblzma-dev : JSON, DWARF symbols, xz-compressed debug sections
ovmf qemu-system-x86 : booting efipt.efi under QEMU (make run, the QEMU tests)
mtools dosfstools fdisk : ESP images and the USB disk image
debian-archive-keyring xz-utils : qemu-plugin.h from Debian's qemu source package
libglib2.0-dev pkgconf : glib.h, which qemu-plugin.h includes from QEMU 9.0 on
python3 file : test scripts
procps : pgrep and ps, with which the tests check that QEMU ends with efipt
lcov : genhtml and lcov, which the coverage tests run on efipt's tracefiles
protobuf-compiler : protoc --decode, which checks efipt timeline's Perfetto output
systemd-boot-efi grub-efi-amd64-bin shim-unsigned ipxe memtest86+ : real UEFI binaries, test data
nasm acpica-tools uuid-dev dpkg-dev patch : OVMF built with EfiptPkg from Debian's edk2 source (make ovmf-efipt)
EON
}

installed() {
	dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"
}

# the archive has a version of $1 to install
offered() {
	c=$(apt-cache policy "$1" 2>/dev/null | sed -n 's/^ *Candidate: //p')
	[ -n "$c" ] && [ "$c" != "(none)" ]
}

# clang's major version in the archive (clang depends on clang-N)
clang_major() {
	apt-cache depends clang 2>/dev/null | sed -n 's/^ *Depends: clang-\([0-9][0-9]*\)$/\1/p' | head -n 1
}

# the major version of the installed clang, if any
clang_installed() {
	dpkg-query -W -f='${Depends}' clang 2>/dev/null | sed -n 's/^clang-\([0-9][0-9]*\).*/\1/p'
}

# Each package of a need line is a need of its own; "a|b" is one need.
# Prints "ALTERNATIVES<tab>WHY" for every need not met.
unmet() {
	have_clang=$(clang_installed)
	{ needs; for p in "$@"; do echo "$p : asked for by this make target"; done; } |
	while IFS= read -r line; do
		pkgs=${line%% : *}
		why=${line#* : }
		for alt in $pkgs; do
			met=""
			for p in $(echo "$alt" | sed "s/@CLANG@/${have_clang:-none}/g" | tr '|' ' '); do
				installed "$p" && met=1 && break
			done
			[ -n "$met" ] || printf '%s\t%s\n' "$alt" "$why"
		done
	done
}

missing=$(unmet "$@")
[ -z "$missing" ] && exit 0

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
mkdir -p "$(dirname "$log")"
: >"$log"
# apt_step WHAT COMMAND...: one line, the output into the log
apt_step() {
	what=$1
	shift
	say "$what"
	echo "== $*" >>"$log"
	if ! $SUDO "$@" >>"$log" 2>&1; then
		say "failed: $* (the last lines of $log:)"
		tail -n 15 "$log" | sed 's/^/    /' >&2
		exit 1
	fi
}
say "missing: $(echo "$missing" | cut -f1 | sed 's/|.*//' | tr '\n' ' ')(apt's output: $log)"
apt_step "updating the package lists (apt-get update)" apt-get update -q

clang=$(clang_major)
pick=""
none=""
tab=$(printf '\t')
while IFS="$tab" read -r alt why; do
	chosen=""
	for p in $(echo "$alt" | tr '|' ' '); do
		case $p in
		*@CLANG@*)
			[ -n "$clang" ] || continue
			p=$(echo "$p" | sed "s/@CLANG@/$clang/")
			;;
		esac
		if offered "$p"; then
			chosen=$p
			break
		fi
	done
	if [ -n "$chosen" ]; then
		pick="$pick $chosen"
	else
		names=$(echo "$alt" | sed "s/@CLANG@/${clang:-N}/g; s/|/ or /g")
		none="$none
    $names: $why"
	fi
done <<EOM
$missing
EOM
if [ -n "$none" ]; then
	say "this system's package archive offers no package for:$none"
	say "(the sources apt reads: /etc/apt/sources.list*; nothing was installed)"
	exit 1
fi
apt_step "installing$pick" apt-get install -y -q --no-install-recommends $pick
left=$(unmet "$@")
if [ -n "$left" ]; then
	say "still not installed after apt-get install: $(echo "$left" | cut -f1 | tr '\n' ' ')(see $log)"
	exit 1
fi
say "done"
