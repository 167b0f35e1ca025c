# Build invariants: core/ is freestanding, efipt.efi is a self-contained
# PE32+ EFI application.
. tests/lib.sh
if make -s check-core >"$TMP/core" 2>&1; then ok "core/ builds freestanding and includes no libc header"; else nok "core/ is freestanding" "$(cat "$TMP/core")"; fi
if make -s check-efi >"$TMP/efi" 2>&1; then ok "efipt.efi has no undefined symbols"; else nok "efipt.efi has no undefined symbols" "$(cat "$TMP/efi")"; fi
objdump -p build/efipt.efi >"$TMP/pe" 2>&1
contains "efipt.efi is PE32+" "$TMP/pe" "Magic			020b"
contains "efipt.efi subsystem is EFI application (10)" "$TMP/pe" "Subsystem		0000000a	(EFI application)"
contains "efipt.efi has base relocations" "$TMP/pe" "PE File Base Relocations"
file build/efipt >"$TMP/host"
contains "efipt is a Linux x86-64 program" "$TMP/host" "ELF 64-bit LSB pie executable, x86-64"
