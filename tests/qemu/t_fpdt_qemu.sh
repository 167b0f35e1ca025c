# The firmware's boot-performance records under QEMU+OVMF. Debian's OVMF
# publishes no FPDT (its PerformanceLib is the Null one), so QEMU publishes a
# crafted one (tests/cli/fpdt_gen.py): the ACPI FPDT through -acpitable (OVMF
# installs QEMU's tables: RSDP, XSDT, FPDT as a firmware has them), its FBPT
# put into guest RAM by -device loader at 0x3000000 (conventional memory
# OVMF leaves alone on this machine). efipt.efi must find it the firmware's
# way, check it against the memory map, save it raw into fpdt.bin, and say
# what it skipped; info and timeline show the records.
. tests/lib.sh
. tests/qemu/lib_qemu.sh
A=0x3000000
F=$TMP/fpdt
mkdir -p "$F"
S=0x3100000
python3 tests/cli/fpdt_gen.py acpi "$F/fpdt.dat" "$F/fbpt.bin" --fbpt-addr $A --damaged
python3 tests/cli/fpdt_gen.py acpi "$F/fpdt3.dat" "$F/fbpt.bin" "$F/s3pt.bin" --fbpt-addr $A \
	--s3pt-addr $S --damaged

export QEMU_EXTRA="-acpitable file=$F/fpdt3.dat -device loader,file=$F/fbpt.bin,addr=$A,force-raw=on -device loader,file=$F/s3pt.bin,addr=$S,force-raw=on"
boot fpdt "snapshot --debugcon --shutdown"
contains "fpdt: efipt.efi says what it saved" "$TMP/fpdt/debugcon.log" \
	"efipt: the firmware's boot performance tables: 3 saved to fpdt.bin"
run=$(rundirs fpdt | head -n 1)
expect "fpdt: fpdt.bin is the FPDT, the FBPT and the S3PT, byte for byte" python3 -c "
d = open('$run/fpdt.bin', 'rb').read()
a, b, c = (open('$F/' + n, 'rb').read() for n in ('fpdt3.dat', 'fbpt.bin', 's3pt.bin'))
assert d == a + b + c, (len(d), len(a), len(b), len(c))"
expect "fpdt: the manifest lists the tables and their addresses" python3 -c "
import json
m = json.load(open('$run/manifest.json'))
f = m['fpdt']
assert f['status'] == 'saved' and f['file'] == 'fpdt.bin', f
t = f['tables']
assert [x['signature'] for x in t] == ['FPDT', 'FBPT', 'S3PT'], t
assert t[1]['address'] == '$A' and t[2]['address'] == '$S', t
assert t[0]['length'] == 68 and t[1]['length'] == $(stat -c %s "$F/fbpt.bin") and t[2]['length'] == 52, t
assert any(x['name'] == 'fpdt.bin' and x['status'] == 'written' for x in m['files'])"
expect_rc "fpdt: efipt info lists the records" 0 $EFIPT info "$run"
contains "fpdt: info: the basic boot record" "$TMP/out" "ExitBootServicesExit              960.000 us since reset"
contains "fpdt: info: a StartImage" "$TMP/out" "100.000        200.000  StartImage   11111111-2222-3333-4444-555555555555"
contains "fpdt: info: the S3PT's resume record" "$TMP/out" "S3 resume: count 1, the last 2.000 us, average 2.000 us"
contains "fpdt: info: a damaged record named and skipped" "$TMP/err" \
	"fpdt.bin: offset 734: record type 0x1010, length 3: record length below its 4-byte header: skipped"

# an FBPT pointer outside the memory map: efipt.efi reads nothing there,
# saves the FPDT and says why the FBPT is not saved
python3 tests/cli/fpdt_gen.py acpi "$F/far.dat" "$F/unused.bin" --fbpt-addr 0x7ff0000000
QEMU_EXTRA="-acpitable file=$F/far.dat" boot far "snapshot --debugcon --shutdown"
run=$(rundirs far | head -n 1)
expect "fpdt: an FBPT outside the memory map is skipped and said" python3 -c "
import json
f = json.load(open('$run/manifest.json'))['fpdt']
assert f['status'] == 'saved' and [x['signature'] for x in f['tables']] == ['FPDT'], f
assert f['problems'] == 'FBPT at 0x7ff0000000 skipped: its address is not in the memory map', f"

# an FBPT whose stated length is past what any FBPT needs (16 MiB): nothing
# of it is read past its header
python3 -c "
import struct
b = bytearray(open('$F/fbpt.bin', 'rb').read())
b[4:8] = struct.pack('<I', 0x01000001)
open('$F/long.bin', 'wb').write(b)"
QEMU_EXTRA="-acpitable file=$F/fpdt.dat -device loader,file=$F/long.bin,addr=$A,force-raw=on" \
	boot long "snapshot --debugcon --shutdown"
run=$(rundirs long | head -n 1)
expect "fpdt: an FBPT with a length above 16 MiB is skipped and said" python3 -c "
import json
f = json.load(open('$run/manifest.json'))['fpdt']
assert [x['signature'] for x in f['tables']] == ['FPDT'], f
assert f['problems'] == 'FBPT at $A skipped: its length is above 16 MiB', f"

# without an FPDT (Debian's OVMF as it is) the manifest says so
QEMU_EXTRA= boot none "snapshot --debugcon --shutdown"
run=$(rundirs none | head -n 1)
expect "fpdt: a firmware without an FPDT: said, no fpdt.bin" python3 -c "
import json, os
f = json.load(open('$run/manifest.json'))['fpdt']
assert f == {'status': 'absent', 'reason': 'the XSDT lists no FPDT'}, f
assert not os.path.exists('$run/fpdt.bin')"

# efipt qemu: the guest's fpdt.bin and manifest member merged into the run
# of the trace (-icount: the TSC counts ns from QEMU's start), the records
# drawn by timeline on the trace's clock. The StartImage record names DxeCore
# (its FILE_GUID; its code runs while the app calls boot services) and spans
# 0 .. 1000 s after reset, so it brackets the whole trace; the others end
# before the trace starts.
plugin_output "fpdt: efipt qemu"
DXECORE=d6a2cb7f-6a18-4e2f-b43b-9920a733700a
python3 tests/cli/fpdt_gen.py acpi "$F/late.dat" "$F/late.bin" --fbpt-addr $A --damaged \
	--guid-a $DXECORE --a-start 0 --a-end 1000000000000
d=$TMP/merge
mkdir -p "$d"
sh ovmf/mkesp.sh --image "$d/esp.img" --add 'build/tests/traced_app.efi:\EFI\tools\app.efi' \
	--args 'trace --source qemu --debugcon --shutdown -- \EFI\tools\app.efi' >/dev/null
QEMU_EXTRA="-icount shift=3,sleep=off -acpitable file=$F/late.dat -device loader,file=$F/late.bin,addr=$A,force-raw=on" \
	nice -n 10 sh ovmf/qemu_esp.sh "$EFIPT" "$d/esp.img" "$d" 300 --esp "$d/esp.img" \
	--start marker --stop marker --tsc >"$d/out" 2>"$d/err"
rc=$?
[ "$rc" -eq 0 ] && ok "fpdt: efipt qemu --esp --tsc merged" || nok "fpdt: efipt qemu merged" "exit $rc: $(head -c 400 "$d/err")"
expect "fpdt: the merged run has fpdt.bin and the manifest's fpdt" python3 -c "
import json
m = json.load(open('$d/run/manifest.json'))
assert m['fpdt']['status'] == 'saved', m.get('fpdt')
assert any(x['name'] == 'fpdt.bin' for x in m['files']), m['files']
assert open('$d/run/fpdt.bin', 'rb').read() == open('$F/late.dat', 'rb').read() + open('$F/late.bin', 'rb').read()"
expect_rc "fpdt: timeline of the merged run" 0 $EFIPT timeline "$d/run" -o "$d/tl.json"
contains "fpdt: timeline names the damaged record" "$TMP/err" "offset 718: record type 0x1010, length 3"
contains "fpdt: timeline says the records before the trace are left out" "$TMP/err" "FPDT records end before the trace starts: left out"
expect "fpdt: DxeCore's StartImage on the trace's clock (ns since reset less the first TSC)" python3 -c "
import json
d = json.load(open('$d/tl.json'))
o = d['otherData']
first = o['tsc_first']
assert o['tsc_hz'] == 1000000000 and o['fpdt_time'].startswith('ns since reset less %d ns' % first), o
names = {e['tid']: e['args']['name'] for e in d['traceEvents'] if e.get('ph') == 'M' and e.get('name') == 'thread_name'}
ev = [e for e in d['traceEvents'] if names.get(e.get('tid'), '').startswith('Firmware FPDT') and e.get('ph') in 'BEi']
# the other crafted records end at most 960 us after reset, before the app
assert first > 960000, first
assert [(e['ph'], e['name']) for e in ev] == [('B', 'StartImage DxeCore'), ('E', 'StartImage DxeCore')], ev
assert ev[0]['ts'] == 0 and abs(ev[1]['ts'] * 1000 - (10**12 - first)) < 1, (ev, first)"
expect_rc "fpdt: info --vs-trace of the merged run" 0 $EFIPT info --vs-trace "$d/run"
contains "fpdt: info --vs-trace: the record brackets DxeCore's time in the trace" "$TMP/out" \
	"yes: the record brackets it  StartImage DxeCore"
expect "fpdt: info --vs-trace: DxeCore's first and last time lie in the trace's" python3 -c "
import json
o = json.load(open('$d/tl.json'))['otherData']
cpu = [e for e in json.load(open('$d/tl.json'))['traceEvents'] if e.get('tid') == 1 and e.get('ph') in 'BE']
end = o['tsc_first'] / 1000 + max(e['ts'] for e in cpu)
line = [l for l in open('$TMP/out') if 'StartImage DxeCore' in l and 'brackets' in l][0].split()
first, last = float(line[4]), float(line[5])
assert o['tsc_first'] / 1000 - 0.001 <= first < last <= end + 0.001, (first, last, o['tsc_first'], end)"
