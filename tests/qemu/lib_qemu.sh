# Helpers for QEMU+OVMF tests (sourced after tests/lib.sh).
# boot NAME "ARGS" [QEMU_CPU]: build an ESP whose efipt.args holds ARGS, boot
# it, leave results in $TMP/NAME/ (debugcon.log, efipt/<run-id>/, ...).
# boot_esp NAME [QEMU_CPU]: the same for an ESP already in $TMP/NAME/esp.img.
# The boot itself is a check: it must end by itself before the timeout.
# QEMU_EXTRA (exported) adds QEMU options.
BOOT_TIMEOUT=${BOOT_TIMEOUT:-90}
boot() {
	mkdir -p "$TMP/$1"
	sh ovmf/mkesp.sh --image "$TMP/$1/esp.img" --args "$2" >/dev/null
	boot_esp "$1" "${3:-max}"
}
boot_esp() {
	name=$1 cpu=${2:-max}
	QEMU_CPU=$cpu sh ovmf/boot.sh "$TMP/$name/esp.img" "$TMP/$name" "$BOOT_TIMEOUT"
	rc=$?
	if [ "$rc" -eq 0 ]; then
		ok "$name: boots, runs and powers off"
	else
		nok "$name: boots, runs and powers off" "QEMU exit $rc (124 = timeout); log: $(tail -c 600 "$TMP/$name/debugcon.log" 2>/dev/null)"
	fi
}
# rundirs NAME: the run directories copied out of NAME's ESP
rundirs() { ls -d "$TMP/$1"/efipt/*/ 2>/dev/null; }
# The plugins to test: the system QEMU's, or those tests/run.sh names for
# a second QEMU (its qemu-system-x86_64 then comes first in PATH).
plugin_path() { echo "${EFIPT_QEMU_PLUGIN:-build/efipt-qemu.so}"; }
logger_path() { echo "${EFIPT_INSNLOG:-build/tests/insnlog.so}"; }
# plugin_output NAME: PLUGIN (efipt-qemu.so), LOGGER (insnlog.so), IPT
# (libipt's reader) and CODE (OVMF's code flash) for the plugin's tests;
# when the plugins are not built, "ok NAME: SKIP" and the script ends.
plugin_output() {
	PLUGIN=$(plugin_path)
	LOGGER=$(logger_path)
	IPT=build/tests/ipt_insns
	CODE=/usr/share/OVMF/OVMF_CODE_4M.fd
	if [ ! -f "$PLUGIN" ] || [ ! -f "$LOGGER" ]; then
		# qemu-plugin.h comes from Debian's qemu source package (network)
		ok "$1: SKIP, $PLUGIN not built (qemu-plugin.h unavailable: make qemu-plugin says why)"
		exit 0
	fi
}
