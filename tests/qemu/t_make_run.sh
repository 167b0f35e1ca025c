# make run (ovmf/run.sh): the banner shows the command line as given
# (backslashes too), the run directory shown is the one efipt.efi made (not
# one a traced efipt.efi wrote), and the exit status is efipt.efi's.
. tests/lib.sh
. tests/qemu/lib_qemu.sh
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

# no RUN_ARGS: caps (the hardware answer, here "not supported"), then the
# same efipt.efi tracing an image under QEMU's emulated PT, decoded
env -u RUN_ARGS sh ovmf/run.sh >"$TMP/default.out" 2>&1
rc=$?
[ "$rc" -eq 0 ] && ok "make run: default run exits 0" || nok "make run: default run exits 0" "exit $rc: $(tail -c 400 "$TMP/default.out")"
contains "make run: the hardware path's answer stays visible" "$TMP/default.out" "Intel PT not supported: the CPU vendor is"
if [ -f "$(plugin_path)" ]; then
	ver=$(qemu-system-x86_64 --version | sed -n 's/^QEMU emulator version \([0-9]*\)\.\([0-9]*\).*/\1 \2/p')
	set -- $ver
	if [ "${1:-0}" -gt 9 ] || { [ "${1:-0}" -eq 9 ] && [ "${2:-0}" -ge 2 ]; }; then
		# QEMU 9.2 on: efipt.efi's own hardware path, the plugin following it
		contains "make run: QEMU $1.$2 follows efipt.efi's own WRMSRs" "$TMP/default.out" \
			"== Intel PT emulated by QEMU $1.$2 following efipt.efi's own WRMSRs: efipt qemu --start guest --cpuid tiger-lake-up3-core-i7-1165g7.txt, efipt.efi trace --emulated-caps \\prof.txt"
		expect "make run: the merged run is efipt.efi's hardware path, emulated: its WRMSRs taken, TraceEn on and off" python3 -c "
import json; m=json.load(open('$RUN_OUT/qemu/run/manifest.json'))
assert m['trace']['start']=='guest' and m['emulated_pt'], m['trace'].get('start')
assert 'EMULATED Intel PT' in m['guest_run']['status']['message'], m['guest_run']['status']
w=[json.loads(l) for l in open('$RUN_OUT/qemu/run/rtit.jsonl')]
ctl=[int(x['value'],16) for x in w if x['msr']=='IA32_RTIT_CTL']
assert all(x['result']=='ok' for x in w) and ctl[0]&1 and not ctl[-1]&1, w"
	else
		contains "make run: the emulated trace is announced" "$TMP/default.out" "== Intel PT emulated by QEMU: efipt qemu --start marker --stop marker"
	fi
	contains "make run: the guest's traced image returned" "$TMP/default.out" "== in the guest: \\efipt.efi returned EFI_SUCCESS"
	expect "make run: decoded summary with no errors, the traced image named among the top modules" python3 -c "
import re; s=open('$TMP/default.out').read()
n=int(re.search(r'^Instructions +(\d+)$', s, re.M).group(1))
assert n > 10000 and re.search(r'^Errors +0$', s, re.M), s[-2000:]
m=re.search(r'^ +(\d+) +[0-9.]+%  efipt \(0x', s, re.M)
assert m and int(m.group(1)) > 1000, s[-2000:]"
	contains "make run: trace size and run directory shown" "$TMP/default.out" "== trace.pt: "
	expect_rc "make run: the emulated run directory is a complete run" 0 $EFIPT info "$RUN_OUT/qemu/run"
else
	ok "make run: emulated trace SKIP, $(plugin_path) not built"
fi
