# The UEFI watchdog must not reset a long run. The boot manager arms it for
# 5 minutes before it starts \EFI\BOOT\BOOTX64.EFI; under -icount shift=10
# QEMU's clock advances about 1 us per guest instruction, so a synthetic walk
# of 3M instructions (some 10^9 guest instructions) outlasts it within
# seconds of real time. Deterministic: icount time does not depend on the host.
# icount emulation is slower: a loaded host must not turn it into a timeout
# (set before lib_qemu.sh, which defaults it to 90)
BOOT_TIMEOUT=${BOOT_TIMEOUT:-300}
. tests/lib.sh
. tests/qemu/lib_qemu.sh
export QEMU_EXTRA="-icount shift=10,sleep=off"
boot watchdog 'trace --source synthetic --insns 3000000 --no-snapshot --debugcon --shutdown -- \efipt.efi --version'
unset QEMU_EXTRA
L=$TMP/watchdog/debugcon.log
contains "watchdog: efipt.efi says the timer is off" "$L" "efipt: UEFI watchdog timer off for this run"
contains "watchdog: the run reaches its end" "$L" "efipt: exit EFI_SUCCESS"
run=$(rundirs watchdog | head -n 1)
expect "watchdog: the run directory has its manifest and trace" test -s "$run/manifest.json" -a -s "$run/trace.pt"
expect_rc "watchdog: efipt info accepts the run" 0 $EFIPT info "$run"
