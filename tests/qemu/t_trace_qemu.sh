# efipt.efi trace --source qemu: the whole trace run (load, sideband, start,
# return, run directory) with the trace markers right around StartImage and
# no trace in the guest (efipt-qemu.so writes it on the host).
. tests/lib.sh
. tests/qemu/lib_qemu.sh

boot qsrc 'trace --source qemu --debugcon --shutdown -- \efipt.efi --version'
L=$TMP/qsrc/debugcon.log
contains "source qemu: traced image ran and returned" "$L" "efipt: \\efipt.efi returned EFI_SUCCESS"
contains "source qemu: exits EFI_SUCCESS" "$L" "efipt: exit EFI_SUCCESS"
expect "source qemu: under TCG, no warning about plain NOPs" sh -c "! grep -q 'markers are NOPs' '$L'"
run=$(rundirs qsrc | head -n 1)
expect_rc "source qemu: efipt info accepts the run" 0 $EFIPT info "$run"
expect "source qemu: manifest says the trace is QEMU's, with the snapshots of a trace run" python3 -c "
import json, os; m=json.load(open('$run/manifest.json'))
assert m['trace']=={'source': 'qemu', 'markers': 'EPT1/EPT0', 'tcg': True}, m['trace']
assert m['traced_image']['path']=='\\\\efipt.efi' and m['traced_exit_status']=='EFI_SUCCESS'
assert m['status']['result']=='ok' and 'QEMU trace markers around' in m['status']['message'], m['status']
assert not os.path.exists('$run/trace.pt')
names=[i['name'] for i in json.load(open('$run/images.json'))['images']]
assert 'efipt' in names and len(names) > 20, names"
# the markers are in efipt.efi's code, inline around StartImage and ConnectController
n1=$(python3 -c "print(open('build/efipt.efi','rb').read().count(bytes.fromhex('0f1f840045505431')))")
n0=$(python3 -c "print(open('build/efipt.efi','rb').read().count(bytes.fromhex('0f1f840045505430')))")
[ "$n1" = 2 ] && [ "$n0" = 2 ] && ok "source qemu: efipt.efi holds two start and two stop markers" ||
	nok "source qemu: efipt.efi holds two start and two stop markers" "start $n1, stop $n0"

boot qsrcdec 'trace --source qemu --decode --debugcon --shutdown -- \efipt.efi --version'
contains "source qemu --decode: refused with the reason" "$TMP/qsrcdec/debugcon.log" "efipt: trace: --decode needs a trace in memory; with --source qemu the host has it"
