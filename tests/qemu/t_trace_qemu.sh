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
# the markers are in efipt.efi's code, inline around StartImage and ConnectController,
# and a stop marker in the flight recorder's ExitBootServices handler (--recorder-stop exit)
n1=$(python3 -c "print(open('build/efipt.efi','rb').read().count(bytes.fromhex('0f1f840045505431')))")
n0=$(python3 -c "print(open('build/efipt.efi','rb').read().count(bytes.fromhex('0f1f840045505430')))")
[ "$n1" = 2 ] && [ "$n0" = 3 ] && ok "source qemu: efipt.efi holds two start and three stop markers" ||
	nok "source qemu: efipt.efi holds two start and three stop markers" "start $n1, stop $n0"

boot qsrcdec 'trace --source qemu --decode --debugcon --shutdown -- \efipt.efi --version'
contains "source qemu --decode: refused with the reason" "$TMP/qsrcdec/debugcon.log" "efipt: trace: --decode needs a trace in memory; with --source qemu the host has it"

# efipt qemu --esp: efipt.efi traces a small app between the markers under
# efipt-qemu.so; after QEMU powers off, the guest's run directory (images,
# memory map) is merged into the trace's. The logger records from the start
# marker to the stop marker on its own: the decoded flow must equal it.
plugin_output "efipt qemu --esp"
QARGS="-machine q35 -m 512 -smp 1 -accel tcg -cpu max -display none -nodefaults -no-reboot -net none"
# qemu_esp NAME ESP-IMAGE EFIPT-QEMU-OPTIONS...: efipt qemu over OVMF booting the
# ESP (ovmf/qemu_esp.sh), the logger recording between the markers
qemu_esp() {
	n=$1 esp=$2
	shift 2
	QEMU_EXTRA="-plugin $LOGGER,out=$TMP/$n/log.bin,from=marker,to=marker" \
		nice -n 10 sh ovmf/qemu_esp.sh "$EFIPT" "$esp" "$TMP/$n" 120 "$@" \
		>"$TMP/$n/out" 2>"$TMP/$n/err"
}
d=$TMP/merge
mkdir -p "$d"
sh ovmf/mkesp.sh --image "$d/esp.img" --add 'build/tests/traced_app.efi:\EFI\tools\app.efi' \
	--args 'trace --source qemu --debugcon --shutdown -- \EFI\tools\app.efi' >/dev/null
qemu_esp merge "$d/esp.img" --esp "$d/esp.img" --start marker --stop marker
rc=$?
[ "$rc" -eq 0 ] && ok "efipt qemu --esp: QEMU runs past the stop marker, efipt.efi powers off, merged" ||
	nok "efipt qemu --esp: merged" "exit $rc: $(head -c 400 "$d/err"); $(tail -c 300 "$d/debugcon.log")"
contains "efipt qemu --esp: says which guest run it merged" "$d/out" "merged efipt.efi's run "
contains "efipt qemu --esp: the start marker is in efipt.efi" "$d/out" "the start marker is in BOOTX64)"
expect_rc "efipt qemu --esp: efipt info accepts the merged run" 0 $EFIPT info "$d/run"
decoded_equals_log "efipt qemu --esp" "$d" "start marker to stop marker"
expect "efipt qemu --esp: one manifest: the trace is QEMU's, the image and its status the guest's" python3 -c "
import json; m=json.load(open('$d/run/manifest.json')); t=m['trace']
assert t['source']=='qemu' and t['stopped_by']=='stop' and t['marker_image']=='BOOTX64', t
assert m['traced_image']['path']=='\\\\EFI\\\\tools\\\\app.efi' and m['traced_exit_status']=='EFI_SUCCESS', m
assert m['guest_run']['status']['result']=='ok' and m['cpu']['hypervisor']=='TCGTCGTCGTCG', m['guest_run']
names=[i['name'] for i in json.load(open('$d/run/images.json'))['images']]
assert 'app' in names and 'BOOTX64' in names, names"
expect_rc "efipt qemu --esp: efipt decode succeeds" 0 $EFIPT decode "$d/run"
mv "$TMP/out" "$d/decode.txt"
# the app's own work (200 Collatz walks) is attributed to it by name
expect "efipt decode names the traced app" python3 -c "
import re; s=open('$d/decode.txt').read()
m=re.search(r'^ +(\d+) +[0-9.]+%  app \(0x', s, re.M)
assert m and int(m.group(1)) > 50000, s
assert re.search(r'^Errors +0$', s, re.M), s"
# coverage of the app: its code is its executable sections (the PE headers
# are not in the plugin's record of executed bytes: the merge takes them
# from the guest's snapshots), read here from the .efi file itself
expect_rc "efipt qemu --esp: coverage of the merged run" 0 $EFIPT coverage "$d/run" --format json -o "$d/cov.json"
expect "coverage: the app's code is its executable sections, the percentage of them" python3 -c "
import json, struct
d = open('build/tests/traced_app.efi', 'rb').read()
pe = struct.unpack_from('<I', d, 0x3c)[0]
nsec, opt = struct.unpack_from('<HH', d, pe + 6)[0], struct.unpack_from('<H', d, pe + 20)[0]
text = 0
for i in range(nsec):
    s = pe + 24 + opt + 40 * i
    vs, va, rs = struct.unpack_from('<III', d, s + 8)
    if struct.unpack_from('<I', d, s + 36)[0] & 0x20000020:
        text += vs or rs
a = [i for i in json.load(open('$d/cov.json'))['images'] if i['path'] == 'app.efi'][0]
assert a['code_size'] == text and a['code_from'] == 'sections' and a['size'] > text, (a, text)
assert a['percent'] == round(a['bytes'] * 1000 / text) / 10, (a, text)"
pct=$(python3 -c "import json; print([i['percent'] for i in json.load(open('$d/cov.json'))['images'] if i['path'] == 'app.efi'][0])")
expect_rc "coverage: --fail-under at the app's own percentage passes" 0 $EFIPT coverage "$d/run" --fail-under "$pct" --image app

# module names from OVMF's firmware volumes (LZMA-compressed DXEFV): the
# firmware drivers efipt.efi lists as FvFile(GUID) take their UI names
contains "efipt qemu: firmware volumes read" "$d/out" "firmware volumes of $CODE: "
expect "efipt decode names firmware drivers from the firmware volumes" python3 -c "
import re, json; s=open('$d/decode.txt').read()
assert re.search(r'%  DxeCore \(0x', s), s
assert not re.search(r'FvFile\(D6A2CB7F', s), s
m=json.load(open('$d/run/manifest.json'))['firmware_volumes']
assert m['modules'] > 100 and m['lzma'] >= 1 and m['lzma_failed'] == 0 and m['renamed'] > 50, m"

# the same ESP again, efipt.efi now writing no run directory: the run the
# first boot left there must not be merged as this one's
printf '%s\n' '--no-run-dir trace --source qemu --debugcon --shutdown -- \EFI\tools\app.efi' >"$TMP/stale.args"
MTOOLS_SKIP_CHECK=1 mcopy -o -i "$TMP/merge/esp.img" "$TMP/stale.args" ::/EFI/BOOT/efipt.args
mkdir -p "$TMP/stale"
qemu_esp stale "$TMP/merge/esp.img" --esp "$TMP/merge/esp.img" --start marker --stop marker
rc=$?
[ "$rc" -eq 1 ] && ok "efipt qemu --esp, only an earlier run on the ESP: exit 1" ||
	nok "efipt qemu --esp, only an earlier run on the ESP: exit 1" "exit $rc: $(cat "$TMP/stale/out")"
contains "efipt qemu --esp, only an earlier run on the ESP: not merged, said why" "$TMP/stale/err" "no new run of 'efipt.efi trace --source qemu' in \\efipt"
expect "efipt qemu --esp, only an earlier run: no guest_run in the manifest" python3 -c "
import json; m=json.load(open('$TMP/stale/run/manifest.json')); assert 'guest_run' not in m, m['guest_run']"

# a SEC/PEI window: those modules run in place, where their TE/PE headers say
d=$TMP/pei
mkdir -p "$d"
cp /usr/share/OVMF/OVMF_VARS_4M.fd "$d/vars.fd"
# shellcheck disable=SC2086
expect_rc "efipt qemu: a SEC/PEI window traced" 0 nice -n 10 timeout 120 $EFIPT qemu -o "$d/run" \
	--start protected --limit 2000000 -- $QARGS \
	-drive if=pflash,format=raw,unit=0,readonly=on,file="$CODE" \
	-drive if=pflash,format=raw,unit=1,file="$d/vars.fd"
expect_rc "efipt qemu: SEC/PEI window decodes" 0 $EFIPT decode "$d/run"
expect "SEC/PEI: the instructions are SecMain's, the PEI modules are listed" python3 -c "
import re, json; s=open('$TMP/out').read()
m=re.search(r'^ +(\d+) +[0-9.]+%  SecMain \(0x', s, re.M)
assert m and int(m.group(1)) > 1000000 and re.search(r'^Errors +0$', s, re.M), s
names=[i['name'] for i in json.load(open('$d/run/images.json'))['images']]
assert 'PeiCore' in names and 'PlatformPei' in names and 'DxeIpl' in names, names"
expect "SEC/PEI: coverage counts the modules' executable sections from the firmware volumes" sh -c "
$EFIPT coverage '$d/run' --format json -o '$d/cov.json' && python3 -c \"
import json; c = json.load(open('$d/cov.json'))['images']
s = [i for i in c if i['path'] == 'SecMain.efi'][0]
assert s['code_from'] == 'sections' and 0 < s['code_size'] < s['size'] and s['bytes'] <= s['code_size'], s\""

# a guest that wrote no run of trace --source qemu: the trace stays, the merge is refused
d=$TMP/nomerge
mkdir -p "$d"
EFIPT_EFI=build/tests/marker_app.efi sh ovmf/mkesp.sh --image "$d/esp.img" >/dev/null
qemu_esp nomerge "$d/esp.img" --esp "$d/esp.img" --start marker --stop marker
rc=$?
[ "$rc" -eq 1 ] && ok "efipt qemu --esp, no guest run: exit 1" || nok "efipt qemu --esp, no guest run: exit 1" "exit $rc"
contains "efipt qemu --esp, no guest run: the reason is named" "$d/err" "efipt qemu: merging efipt.efi's run: $d/esp.img: no \\efipt directory could be read from it"
expect_rc "efipt qemu --esp, no guest run: the trace itself is a complete run" 0 $EFIPT info "$d/run"
expect_rc "efipt qemu --esp: a missing image is named before QEMU runs" 2 $EFIPT qemu -o "$TMP/noesp" \
	--esp "$TMP/none.img" -- -bios x
contains "efipt qemu --esp: missing image named" "$TMP/err" "efipt qemu: --esp $TMP/none.img: No such file or directory"
