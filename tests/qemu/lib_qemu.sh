# Helpers for QEMU+OVMF tests (sourced after tests/lib.sh).
# boot NAME "ARGS" [QEMU_CPU]: build an ESP whose efipt.args holds ARGS, boot
# it, leave results in $TMP/NAME/ (debugcon.log, efipt/<run-id>/, ...).
# The boot itself is a check: it must end by itself before the timeout.
BOOT_TIMEOUT=${BOOT_TIMEOUT:-90}
boot() {
	name=$1 args=$2 cpu=${3:-max}
	mkdir -p "$TMP/$name"
	sh ovmf/mkesp.sh --image "$TMP/$name/esp.img" --args "$args" >/dev/null
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
