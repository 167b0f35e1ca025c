# make run (ovmf/run.sh): the banner shows the command line as given
# (backslashes too), the run directory shown is the one efipt.efi made (not
# one a traced efipt.efi wrote), and the exit status is efipt.efi's.
. tests/lib.sh
export RUN_OUT=$TMP/run

# a traced second efipt.efi writes its own run directory, sorting after ours
RUN_ARGS='trace --source synthetic --no-snapshot --insns 1000 -- \efipt.efi caps' \
	sh ovmf/run.sh >"$TMP/nested.out" 2>&1
rc=$?
[ "$rc" -eq 0 ] && ok "make run: exit 0 when efipt.efi succeeds" || nok "make run: exit 0 when efipt.efi succeeds" "exit $rc: $(tail -c 300 "$TMP/nested.out")"
contains "make run: banner shows backslashes as typed" "$TMP/nested.out" "== booting efipt.efi under QEMU+OVMF: efipt.efi --debugcon --shutdown trace --source synthetic --no-snapshot --insns 1000 -- \\efipt.efi caps"
expect "make run: banner has no control characters" sh -c "! head -n 1 '$TMP/nested.out' | grep -q '[[:cntrl:]]'"
n=$(ls -d "$RUN_OUT"/efipt/*/ 2>/dev/null | wc -l)
[ "$n" -eq 2 ] && ok "make run: the traced efipt.efi wrote a second run directory" || nok "make run: nested run directory" "found $n (the test needs 2)"
shown=$(sed -n 's/^== run directory copied out of the ESP image: //p' "$TMP/nested.out")
expect "make run: shows the run directory it made, not the nested one" python3 -c "
import json; m=json.load(open('$shown/manifest.json'))
assert m['command']=='trace', m['command']"

# efipt.efi fails: make run fails
RUN_ARGS='trace --source synthetic -- \missing.efi' sh ovmf/run.sh >"$TMP/fail.out" 2>&1
rc=$?
[ "$rc" -eq 1 ] && ok "make run: exit 1 when efipt.efi fails" || nok "make run: exit 1 when efipt.efi fails" "exit $rc"
contains "make run: says how efipt.efi failed" "$TMP/fail.out" "== efipt.efi failed: EFI_NOT_FOUND"
