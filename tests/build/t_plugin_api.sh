# The plugins' build against QEMU's plugin API (qemu-plugin/plugin_api.h,
# docs/qemu.md "Platforms"): a qemu-plugin.h outside versions 1 (QEMU 7.2)
# to 4 (QEMU 10.x) stops the build with a message naming the versions
# known; the header comes from the upstream tarball of another revision
# where a version's own source is no longer served; a version no suite has
# is named (and make test then skips the plugin tests).
. tests/lib.sh

# a qemu-plugin.h of another API version: only its version line matters,
# the check comes before anything else is used
fake_api() {
	mkdir -p "$TMP/api$1/qemu"
	printf '#define QEMU_PLUGIN_VERSION %s\n' "$1" >"$TMP/api$1/qemu/qemu-plugin.h"
	printf '#include "qemu-plugin/plugin_api.h"\n' |
		${CC:-cc} -fsyntax-only -I. -I"$TMP/api$1" -x c - >"$TMP/api$1.err" 2>&1
}
if fake_api 0; then
	nok "plugin API 0: refused" "compiled"
else
	contains "plugin API 0: refused, QEMU 7.2 named as the oldest" "$TMP/api0.err" \
		"older than QEMU 7.2's (plugin API version 1): efipt's plugins need QEMU 7.2 or newer"
fi
if fake_api 5; then
	nok "plugin API 5: refused" "compiled"
else
	contains "plugin API 5: refused, the versions known named" "$TMP/api5.err" \
		"newer than efipt's plugins know (plugin API versions 1, QEMU 7.2, to 4, QEMU 10.0)"
fi
# the same through make, as a user would see it
make -s qemu-plugin QPLUG_DIR="$TMP/api5" QPLUG_BUILD="$TMP/out5" >"$TMP/make5.out" 2>&1
rc=$?
[ "$rc" -ne 0 ] && ok "make qemu-plugin against API 5 fails" || nok "make qemu-plugin against API 5 fails" "exit 0"
contains "make qemu-plugin against API 5 says why" "$TMP/make5.out" "newer than efipt's plugins know"
[ ! -e "$TMP/out5/efipt-qemu.so" ] && ok "no plugin built against API 5" || nok "no plugin built against API 5" "$TMP/out5/efipt-qemu.so exists"

# a revision the archive does not serve: the tarball of one that it does
# (Debian's archive: skip when it cannot be reached)
sh mk/debian-source.sh --orig hello 2.10-1 "$TMP/aptsrc" >"$TMP/out" 2>"$TMP/err"
rc=$?
if [ "$rc" -ne 0 ] && grep -q "network" "$TMP/err"; then
	ok "source fetch: SKIP, Debian's archive not reachable: $(head -c 200 "$TMP/err")"
	exit 0
fi
[ "$rc" -eq 0 ] && ok "source fetch: a revision no longer served" || nok "source fetch: a revision no longer served" "exit $rc: $(head -c 300 "$TMP/err")"
contains "source fetch: says where the tarball came from" "$TMP/err" "hello=2.10-1 is no longer served; its upstream tarball comes with 2.10-"
contains "source fetch: the upstream tarball's path" "$TMP/out" "/src/hello_2.10.orig.tar."
f=$(cat "$TMP/out")
[ -s "$f" ] && ok "source fetch: the tarball is there" || nok "source fetch: the tarball is there" "$f"
# QEMU releases outside the API versions known: named, no header
expect_rc "plugin header: QEMU 6.2 (Ubuntu 22.04) refused" 1 sh qemu-plugin/get-plugin-header.sh "$TMP" "1:6.2+dfsg-2ubuntu6"
contains "plugin header: QEMU 6.2 named as older than 7.2" "$TMP/err" "QEMU 1:6.2+dfsg-2ubuntu6 is older than 7.2, the oldest QEMU efipt's plugins support"
expect_rc "plugin header: QEMU 10.1 (plugin API 5) refused" 1 sh qemu-plugin/get-plugin-header.sh "$TMP" "1:10.1.0+ds-1"
contains "plugin header: QEMU 10.1 named as newer" "$TMP/err" "is newer than efipt's plugins know"
# a release Debian does not have, whose plugin API no Debian QEMU has either
expect_rc "plugin header: QEMU 9.0 (plugin API 2) not in Debian" 1 sh qemu-plugin/get-plugin-header.sh "$TMP" "1:9.0.2+ds-1"
contains "plugin header: the API version named" "$TMP/err" "no QEMU source in Debian 12 or 13 has plugin API 2 (QEMU 1:9.0.2+ds-1)"
[ ! -e "$TMP/qemu/qemu-plugin.h" ] && ok "plugin header: none left behind" || nok "plugin header: none left behind" "exists"
