# efipt qemu's command line (an option table like every command's): each
# bad value refused by name with exit 2 before QEMU starts; no run
# directory is made. No QEMU is needed.
. tests/lib.sh

R=$TMP/run
expect_rc "qemu: --start bogus refused" 2 $EFIPT qemu -o "$R" --start bogus -- -bios x
contains "qemu: --start's choices named" "$TMP/err" "--start bogus: expected reset, protected, marker, guest or an address"
expect_rc "qemu: --stop bogus refused" 2 $EFIPT qemu -o "$R" --stop bogus -- -bios x
contains "qemu: --stop's choices named" "$TMP/err" "--stop bogus: expected exit, marker or an address"
expect_rc "qemu: --limit 0 refused" 2 $EFIPT qemu -o "$R" --limit 0 -- -bios x
contains "qemu: --limit named" "$TMP/err" "--limit 0: expected a number above 0"
expect_rc "qemu: --timeout 0 refused" 2 $EFIPT qemu -o "$R" --timeout 0 -- -bios x
contains "qemu: --timeout named" "$TMP/err" "--timeout 0: expected seconds, 1 to 2592000"
expect_rc "qemu: no -o" 2 $EFIPT qemu -- -bios x
contains "qemu: -o asked for" "$TMP/err" "-o RUNDIR is required"
expect_rc "qemu: no QEMU arguments" 2 $EFIPT qemu -o "$R"
contains "qemu: where QEMU's arguments go" "$TMP/err" "no QEMU arguments (give them after --)"
expect_rc "qemu: an unknown option" 2 $EFIPT qemu -o "$R" --bogus -- -bios x
contains "qemu: the unknown option named" "$TMP/err" "unrecognized option '--bogus'"
expect_rc "qemu: an argument before --" 2 $EFIPT qemu -o "$R" stray -- -bios x
expect_rc "qemu: --cpuid without --start guest" 2 $EFIPT qemu --out "$R" --cpuid x -- -bios x
contains "qemu: --out is -o" "$TMP/err" "--cpuid is for --start guest"
expect_rc "qemu: no firmware in QEMU's arguments" 2 $EFIPT qemu -o "$R" -- -m 512
contains "qemu: the missing firmware said" "$TMP/err" "the QEMU arguments give no firmware"
expect "qemu: no run directory made by a refused command line" test ! -e "$R"
expect_rc "qemu --help" 0 $EFIPT qemu --help
contains "qemu --help: the options" "$TMP/out" "--cpuid FILE"
contains "qemu --help: the trace options" "$TMP/out" "--filter image=NAME"
# every command efipt --help lists says in its --help what its exit
# status means
cmds=$($EFIPT --help 2>&1 | sed -n '/^commands:/,/^$/s/^  \([a-z]*\) .*/\1/p')
[ "$(echo $cmds | wc -w)" -ge 17 ] && ok "efipt --help lists the commands" || nok "efipt --help lists the commands" "$cmds"
for c in $cmds; do
	if $EFIPT "$c" --help 2>&1 | grep -q "^Exit status: 0"; then ok "$c --help: its exit status"; else nok "$c --help: its exit status" "no 'Exit status: 0...' line"; fi
done
