# The firmware's own boot trace (edk2/EfiptPkg, docs/edk2.md) in OVMF built
# with it (make ovmf-efipt), under QEMU's TCG, which has no Intel PT:
#   - the PEIM says why it cannot trace (the CPUID bit), EfiptDxe's table
#     says so, efipt.efi collect reports it; the boot goes on to efipt.efi;
#   - efipt.efi arm --next-boot writes the EfiptNextBoot variable, the next
#     boot reads it (and refuses what the CPU lacks, saying why), EfiptDxe
#     deletes it; a bad option is refused before anything is written;
#   - the handoff with a SYNTHETIC trace (the test build's source): collect
#     writes a run directory whose decode is the synthesizer's truth;
#   - bad input on purpose (--fault): a HOB whose buffer is outside RAM, a
#     forged table, a stale one; a full ESP.
# The emulated trace of the whole span (efipt qemu) is t_edk2_qemu.sh.
. tests/lib.sh
. tests/qemu/lib_qemu.sh

edk2_ovmf "EfiptPkg boot"
# rdir NAME: the run directory collect (or arm) wrote in NAME's boot
rdir() { rundirs "$1" | tail -n 1; }
# fwcheck CHECK NAME PYTHON: ok if PYTHON's asserts about m (NAME's
# manifest), b (its boot_trace) hold, else the assertion is shown
fwcheck() {
	if out=$(python3 -c "import json, os, sys
m = json.load(open('$(rdir "$2")manifest.json'))
b = m.get('boot_trace', {})
$3" 2>&1); then ok "$1"; else nok "$1" "$(echo "$out" | tail -c 400)"; fi
}

# ---- without Intel PT: why, in the PEIM, the table and collect -----------
fwboot plain 'collect --debugcon --shutdown' "" Skylake-Client
F=$TMP/plain/fw.log
D=$TMP/plain/debugcon.log
contains "no PT: EfiptPei names the CPUID bit" "$F" \
	"EfiptPei: unsupported: Intel PT not supported: CPUID.(EAX=07H,ECX=0):EBX[25]=0"
contains "no PT: EfiptPei runs the trace markers instead under TCG" "$F" "QEMU TCG: the EPT1/EPT0 trace markers run instead"
contains "no PT: EfiptDxe takes the record over" "$F" "EfiptDxe: unsupported: Intel PT not supported: CPUID.(EAX=07H,ECX=0):EBX[25]=0"
contains "no PT: EfiptDxe publishes its table at ReadyToBoot" "$F" "EfiptDxe: table at 0x"
expect "no PT: no ASSERT in the firmware's log" sh -c "! grep -q ASSERT '$F'"
contains "no PT: collect reports what the firmware said" "$D" \
	"efipt: firmware boot trace: unsupported, Intel PT, stop at ready-to-boot"
contains "no PT: the boot went on to efipt.efi, which finished" "$D" "efipt: exit EFI_SUCCESS"
expect_rc "no PT: efipt info accepts collect's run" 0 $EFIPT info "$(rdir plain)"
fwcheck "no PT: the run says why, with the markers, and lists PEI and DXE images" plain "
assert b['status']=='unsupported' and 'CPUID.(EAX=07H,ECX=0):EBX[25]=0' in b['reason'], b
assert b['markers'] and b['stopped_at']=='ready-to-boot' and not b['from_variable'], b
assert m['trace']=={'source': 'qemu', 'markers': 'EPT1/EPT0', 'tcg': True, 'firmware': True}, m['trace']
assert m['status']['result']=='ok' and 'trace markers from PEI to ready-to-boot' in m['status']['message']
im=json.load(open('$(rdir plain)images.json'))['images']
n={i['name']: i for i in im}
for k in ('DxeCore', 'EfiptDxe', 'PeiCore', 'DxeIpl', 'EfiptPei', 'PlatformPei', 'CpuDxe', 'BdsDxe'):
    assert k in n, (k, sorted(n))
assert n['EfiptPei']['code_type']=='FirmwareVolume' and n['EfiptPei']['phase']=='PEI', n['EfiptPei']
assert n['DxeCore']['pdb'].endswith('DxeCore.dll') and n['DxeCore']['phase']=='DXE', n['DxeCore']
assert any(i.get('kept') for i in im), 'no image unloaded while tracing kept its pages'
assert not os.path.exists('$(rdir plain)trace.pt')" 

# ---- the next boot's options from a USB stick: arm --next-boot --------
fwboot arm1 'arm --next-boot --ptwrite --size 8M --debugcon --shutdown' "" Skylake-Client
contains "arm: writes the variable" "$TMP/arm1/debugcon.log" "efipt: armed: the next boot traces with: --ptwrite --size 8M"
contains "arm: says this CPU has no PT" "$TMP/arm1/debugcon.log" \
	"efipt: note: Intel PT not supported: CPUID.(EAX=07H,ECX=0):EBX[25]=0"
fwboot arm2 'collect --debugcon --shutdown' "$TMP/arm1/vars.fd" Skylake-Client
contains "arm: the next boot's EfiptPei read the variable and refused, with why" "$TMP/arm2/fw.log" \
	"EfiptPei: unsupported: Intel PT not supported: CPUID.(EAX=07H,ECX=0):EBX[25]=0"
contains "arm: EfiptDxe deleted the variable (this boot only)" "$TMP/arm2/fw.log" \
	"EfiptDxe: EfiptNextBoot variable used and deleted: Success"
contains "arm: the boot went on" "$TMP/arm2/debugcon.log" "efipt: exit EFI_SUCCESS"
fwcheck "arm: collect's run says the options came from the variable" arm2 "
assert b['from_variable'] and b['options']=='--ptwrite --size 8M' and b['status']=='unsupported', b"
fwboot arm3 'arm --show --debugcon --shutdown' "$TMP/arm2/vars.fd"
contains "arm --show: the variable is gone after its boot" "$TMP/arm3/debugcon.log" "efipt: no EfiptNextBoot variable"
contains "efipt.efi names the firmware's boot trace at start" "$TMP/arm3/debugcon.log" \
	"efipt: the firmware's boot trace: unsupported: Intel PT not supported"
fwboot arm4 'arm --next-boot --size 8M --bogus --debugcon --shutdown'
contains "arm: a bad option refused, nothing written" "$TMP/arm4/debugcon.log" \
	"efipt: arm: '--bogus' is not an option of the firmware trace"
contains "arm: a bad option: EFI_INVALID_PARAMETER" "$TMP/arm4/debugcon.log" "efipt: exit EFI_INVALID_PARAMETER"

# ---- the handoff, with a SYNTHETIC trace (this is a test build) --------
# 12K: ToPA regions of 8K and 4K; 320000 instructions fill more than 8K;
# stopped at EndOfDxe (the markers test stops at ReadyToBoot)
fwboot syn1 'arm --next-boot --source synthetic --size 12K --insns 320000 --stop-at end-of-dxe --debugcon --shutdown'
fwboot syn2 'collect --debugcon --shutdown' "$TMP/syn1/vars.fd"
S=$(rdir syn2)
contains "synthetic: collect wrote the trace, labelled, stopped at EndOfDxe" "$TMP/syn2/debugcon.log" "efipt: SYNTHETIC trace of this boot from PEI to end-of-dxe"
contains "synthetic: EfiptDxe synthesized over the DXE core" "$TMP/syn2/fw.log" "EfiptDxe: SYNTHETIC trace: "
expect_rc "synthetic: efipt info accepts the run" 0 $EFIPT info "$S"
fwcheck "synthetic: the run crosses the two ToPA regions" syn2 "
t=m['trace']
assert t['source']=='synthetic' and t['output']=='topa' and t['regions']==2 and t['bytes'] > 8192, t
assert b['source']=='synthetic' and b['status']=='stopped' and b['stopped_at']=='end-of-dxe', b"
expect_rc "synthetic: efipt decode reads it" 0 $EFIPT decode "$S"
mv "$TMP/out" "$TMP/syn2/decode.txt"
$EFIPT insn --run "$S" --no-inst >"$TMP/syn2/insn.txt" 2>"$TMP/syn2/insn.err"
if python3 - "$S" "$TMP/syn2/insn.txt" "$TMP/syn2/decode.txt" >"$TMP/syn2/cmp.txt" 2>&1 <<'EOF'
import json, re, sys
s = json.load(open(sys.argv[1] + '/manifest.json'))['boot_trace']['synthetic']
h, n = 0xcbf29ce484222325, 0
for line in open(sys.argv[2]):
    if line.startswith('['):
        continue
    ip = int(line.split()[0], 16)
    n += 1
    for i in range(8):
        h = ((h ^ ((ip >> (8 * i)) & 0xff)) * 0x100000001b3) & (2**64 - 1)
d = open(sys.argv[3]).read()
assert re.search(r'^Errors +0$', d, re.M), d
assert re.search(r'^Instructions +%d$' % s['insns'], d, re.M), (s, d)
assert n == s['insns'] and h == int(s['ip_hash'], 16), (n, hex(h), s)
print('%d instructions, hash %s' % (n, hex(h)))
EOF
then
	ok "synthetic: the decode is the synthesizer's truth ($(cat "$TMP/syn2/cmp.txt"))"
else
	nok "synthetic: the decode is the synthesizer's truth" "$(tail -c 400 "$TMP/syn2/cmp.txt")"
fi

# ---- bad input on purpose (test builds: --fault) ------------------------
fwboot hob1 'arm --next-boot --source synthetic --size 64K --fault hob-outside-ram --debugcon --shutdown'
fwboot hob2 'collect --debugcon --shutdown' "$TMP/hob1/vars.fd"
contains "HOB outside RAM: EfiptDxe refuses it, naming the region" "$TMP/hob2/fw.log" \
	"EfiptDxe: bad-hob: EfiptPei's record refused: trace output region 0 at 0x"
contains "HOB outside RAM: collect says the firmware did not trace" "$TMP/hob2/debugcon.log" \
	"efipt: the firmware did not trace this boot (bad-hob): EfiptPei's record refused"
contains "HOB outside RAM: the boot went on" "$TMP/hob2/debugcon.log" "efipt: exit EFI_UNSUPPORTED"
fwboot forge1 'arm --next-boot --source synthetic --size 64K --fault forged-table --debugcon --shutdown'
fwboot forge2 'collect --debugcon --shutdown' "$TMP/forge1/vars.fd"
contains "forged table: collect refuses it by its CRC" "$TMP/forge2/debugcon.log" \
	"efipt: the firmware's boot trace table is refused: CRC-32 0x"
fwcheck "forged table: the run failed, saying why, no trace" forge2 "
assert m['status']['result']=='failed' and 'damaged or forged' in m['status']['message'], m['status']
assert not [f for f in m['files'] if f['name']=='trace.pt']"
fwboot stale1 'arm --next-boot --source synthetic --size 64K --fault stale-table --debugcon --shutdown'
fwboot stale2 'collect --debugcon --shutdown' "$TMP/stale1/vars.fd"
contains "stale table: collect refuses a running trace on a CPU without PT" "$TMP/stale2/debugcon.log" \
	"the table says Intel PT still runs, but this CPU has none"
contains "stale table: EFI_COMPROMISED_DATA" "$TMP/stale2/debugcon.log" "efipt: exit EFI_COMPROMISED_DATA"

# ---- a full ESP: files complete or absent, the failure named ------------
fwboot full1 'arm --next-boot --source synthetic --size 64K --insns 320000 --debugcon --shutdown'
mkdir -p "$TMP/full2"
sh ovmf/mkesp.sh --image "$TMP/full2/esp.img" --args 'collect --debugcon --shutdown' >/dev/null
export MTOOLS_SKIP_CHECK=1
free=$(mdir -i "$TMP/full2/esp.img" :: 2>/dev/null | grep 'bytes free' | tr -cd '0-9')
# leave room for the run directory and cpuid.txt, not for the trace
if [ "${free:-0}" -gt 1000000 ] && [ "$free" -lt 100000000 ]; then
	head -c $((free - 8192)) /dev/zero >"$TMP/full2/filler"
	mcopy -i "$TMP/full2/esp.img" "$TMP/full2/filler" ::/filler
	rm -f "$TMP/full2/filler"
else
	nok "full ESP: the ESP's free space read" "mdir says '$free'"
fi
fwboot_esp full2 "$TMP/full1/vars.fd"
contains "full ESP: the trace write fails with EFI_VOLUME_FULL, named" "$TMP/full2/debugcon.log" \
	"trace.pt failed: EFI_VOLUME_FULL"
expect "full ESP: efipt.efi does not exit with success" sh -c "! grep -q 'efipt: exit EFI_SUCCESS' '$TMP/full2/debugcon.log'"
left=$(mdir -/ -b -i "$TMP/full2/esp.img" ::/efipt 2>/dev/null | grep -c '\.tmp$')
[ "$left" -eq 0 ] && ok "full ESP: no half-written file (.tmp) left" || nok "full ESP: no half-written file (.tmp) left" "$left"
if [ -f "$(rdir full2)manifest.json" ]; then
	fwcheck "full ESP: the manifest records the failed trace write" full2 "
assert [f for f in m['files'] if f['name']=='trace.pt' and f['status']=='EFI_VOLUME_FULL'], m['files']
assert m['status']['result']=='failed', m['status']"
else
	expect_rc "full ESP: without a manifest, efipt info refuses the run" 1 $EFIPT info "$(rdir full2)"
fi
