# efipt-qemu.so start=guest (docs/qemu.md "PT that follows the guest"):
# efipt.efi's own hardware path (--emulated-caps: config checked against a
# CPU profile's CPUID, the WRMSR sequence, its ToPA table in memory) under
# QEMU's TCG, the plugin following those WRMSRs with the rules of
# core/pt_unit.c. The trace the plugin writes where the guest's ToPA says
# must decode to exactly what the guest executed while its TraceEn was set,
# as the logger (tests/qemu/insnlog.c from=traceen, which watches the
# WRMSRs on its own) recorded it. Needs plugin API 4 (QEMU 9.2 on: registers
# and guest memory): under an older QEMU the plugin must refuse start=guest.
. tests/lib.sh
. tests/qemu/lib_qemu.sh

plugin_output "start=guest"
PROFILE=$PWD/tests/data/cpu-profiles/tiger-lake-up3-core-i7-1165g7.txt
QARGS="-machine q35 -m 512 -smp 1 -accel tcg -cpu max -display none -nodefaults -no-reboot -net none"

# guest NAME EFIPT-ARGS PLUGIN-PROFILE [QEMU...]: efipt.efi traces app.efi
# with --emulated-caps \prof.txt (PROFILE) under start=guest,cpuid=PLUGIN-PROFILE
guest() {
	n=$1 args=$2 pprof=$3
	shift 3
	d=$TMP/$n
	mkdir -p "$d"
	cp "$PROFILE" "$d/prof.txt"
	sh ovmf/mkesp.sh --image "$d/esp.img" --add 'build/tests/traced_app.efi:\EFI\tools\app.efi' \
		--add "$d/prof.txt:\\prof.txt" --args "$args" >/dev/null
	guest_boot "$d" "$pprof" "$@"
}

# run_with RUN NEW TRACE PYTHON: a copy of run directory RUN as NEW with
# TRACE as its trace.pt (the manifest's sizes updated), PYTHON run on the
# manifest's trace (t) and CPU 0's trace.guest (g)
run_with() {
	mkdir -p "$2"
	cp "$1"/* "$2/"
	cp "$3" "$2/trace.pt"
	python3 -c "
import json, os; m=json.load(open('$2/manifest.json')); t=m['trace']; g=t['guest']['cpus'][0]
n=os.path.getsize('$2/trace.pt'); t['bytes']=n
for f in m['files']:
    if f['name']=='trace.pt': f['size']=n
$4
json.dump(m, open('$2/manifest.json','w'))"
}

api=$(qemu-system-x86_64 --version | sed -n 's/^QEMU emulator version \([0-9]*\)\.\([0-9]*\).*/\1 \2/p')
set -- $api
if [ "${1:-0}" -lt 9 ] || { [ "$1" -eq 9 ] && [ "${2:-0}" -lt 2 ]; }; then
	mkdir -p "$TMP/old"
	# shellcheck disable=SC2086
	timeout 60 qemu-system-x86_64 $QARGS -bios /dev/null \
		-plugin "$PLUGIN,dir=$TMP/old/run,start=guest,cpuid=$PROFILE" </dev/null >"$TMP/old/log" 2>&1
	contains "start=guest: QEMU $1.$2 (plugin API below 4) is refused with the reason" \
		"$TMP/old/log" "start=guest needs QEMU 9.2 or newer (plugin API 4"
	exit 0
fi

# ToPA, efipt.efi's default output, through efipt qemu --start guest
# --cpuid with --esp: the whole path, decoded = executed, and the guest's
# run (images, memory map, emulated_pt) merged into the plugin's
d=$TMP/topa
mkdir -p "$d"
cp "$PROFILE" "$d/prof.txt"
sh ovmf/mkesp.sh --image "$d/esp.img" --add 'build/tests/traced_app.efi:\EFI\tools\app.efi' \
	--add "$d/prof.txt:\\prof.txt" \
	--args 'trace --emulated-caps \prof.txt --debugcon --shutdown -- \EFI\tools\app.efi' >/dev/null
EFIPT_QEMU_PLUGIN=$PLUGIN QEMU_EXTRA="-plugin $LOGGER,out=$d/log.bin,from=traceen" \
	nice -n 10 sh ovmf/qemu_esp.sh "$EFIPT" "$d/esp.img" "$d" 600 --esp "$d/esp.img" \
	--start guest --cpuid "$PROFILE" >"$d/out" 2>"$d/qemu.log"
rc=$?
[ "$rc" -eq 0 ] && ok "topa: efipt qemu --start guest ran efipt.efi to power-off and merged its run" ||
	nok "topa: efipt qemu --start guest" "exit $rc: $(head -c 400 "$d/qemu.log"); $(tail -c 300 "$d/debugcon.log")"
contains "topa: efipt qemu says the PT is emulated and from which profile" "$d/out" \
	"EMULATED Intel PT: tracing while the guest's own WRMSRs set IA32_RTIT_CTL.TraceEn"
contains "topa: efipt qemu merged efipt.efi's run, whose WRMSR started the trace" "$d/out" \
	"the WRMSR that set TraceEn is in BOOTX64)"
expect "topa: the merged manifest: emulated_pt, the guest's run, the app's image" python3 -c "
import json; m=json.load(open('$d/run/manifest.json'))
assert m['emulated_pt']['profile']=='\\\\prof.txt' and m['guest_run']['status']['result']=='ok', m.get('emulated_pt')
assert 'EMULATED Intel PT' in m['guest_run']['status']['message'], m['guest_run']['status']
names=[i['name'] for i in json.load(open('$d/run/images.json'))['images']]
assert 'app' in names and 'BOOTX64' in names, names"
contains "topa: efipt.efi says its PT is emulated, from the profile" "$d/debugcon.log" \
	"efipt: EMULATED Intel PT: the capabilities of \\prof.txt"
contains "topa: the traced app ran" "$d/debugcon.log" "efipt: \\EFI\\tools\\app.efi returned EFI_SUCCESS"
expect "topa: the plugin saw efipt.efi's WRMSRs, all as hardware takes them, TraceEn on then off" python3 -c "
import json; w=[json.loads(l) for l in open('$d/run/rtit.jsonl')]
names=[x['msr'] for x in w]
assert all(x['result']=='ok' for x in w), w
ctl=[int(x['value'],16) for x in w if x['msr']=='IA32_RTIT_CTL']
assert 'IA32_RTIT_OUTPUT_BASE' in names and 'IA32_RTIT_OUTPUT_MASK_PTRS' in names, names
assert len(ctl)==2 and ctl[0]&1 and ctl[0]&(1<<8) and ctl[0]&(1<<13) and not ctl[1]&1, ctl
assert names.index('IA32_RTIT_CTL') > names.index('IA32_RTIT_OUTPUT_BASE'), names"
expect "topa: manifest: the guest's ToPA region, the write position, no #GP" python3 -c "
import json; t=json.load(open('$d/run/manifest.json'))['trace']; g=t['guest']['cpus'][0]
assert t['start']=='guest' and g['output']=='topa' and g['gp']==0 and not g['error'], g
r=g['regions'][0]; assert r['written']==t['bytes']==g['bytes'] > 1000, (r, t['bytes'])
assert g['position']=={'region': 0, 'offset': t['bytes']}, g['position']
assert int(g['output_mask_ptrs'],16)>>32 == t['bytes'], g
assert (int(g['status'],16)>>32)&0x1ffff == t['bytes'] & 0x1ffff, g['status']"
expect "topa: the region file holds the trace where the ToPA region starts" python3 -c "
import json; t=json.load(open('$d/run/manifest.json'))['trace']; r=t['guest']['cpus'][0]['regions'][0]
b=open('$d/run/guest-output.bin','rb').read(); pt=open('$d/run/trace.pt','rb').read()
assert len(b)==r['size'] and b[r['file_offset']:r['file_offset']+len(pt)]==pt, len(b)"
decoded_equals_log topa "$d" "while the guest's TraceEn was set"
expect "topa: the comparison finds a missing instruction" sh -c "! python3 tests/qemu/insnlog_cmp.py \
	'$d/log.bin' '$d/insn.txt' '$d/run/manifest.json' $fc --drop 100"
expect_rc "topa: efipt decode: no errors" 0 $EFIPT decode "$d/run"
expect "topa: efipt decode: no errors, the traced app named with its instructions" python3 -c "
import re; s=open('$TMP/out').read()
m=re.search(r'^ +(\d+) +[0-9.]+%  app \(0x', s, re.M)
assert m and int(m.group(1)) > 50000, s
assert re.search(r'^Errors +0$', s, re.M), s"

# Single-range output (SDM 33.2.7.1), 4 KiB (Tiger Lake's erratum TGL052
# makes efipt.efi take ToPA above that), smaller than the trace: the
# buffer wraps at its mask. The region file holds each byte where the CPU
# would have left it (stream byte k at offset k mod 4K, the last one
# written wins); the write position is the stream length mod 4K; trace.pt
# holds the whole stream and decodes to what ran.
guest single 'trace --emulated-caps \prof.txt --output single --mode wrap --size 4K --debugcon --shutdown -- \EFI\tools\app.efi' \
	"$PROFILE" -plugin "$LOGGER,out=$TMP/single/log.bin,from=traceen"
d=$TMP/single
expect "single: single-range output, wrapped in its 4 KiB as the CPU would" python3 -c "
import json; t=json.load(open('$d/run/manifest.json'))['trace']; g=t['guest']['cpus'][0]
assert g['output']=='single-range' and g['gp']==0 and not g['error'], g
r=g['regions'][0]; size=r['size']; assert size==4096 and len(g['regions'])==1, g['regions']
pt=open('$d/run/trace.pt','rb').read(); n=len(pt); assert n > 2*size, n
assert g['position']['offset']==n % size and int(g['output_mask_ptrs'],16)>>32==n % size, (g, n)
b=open('$d/run/guest-output.bin','rb').read()[r['file_offset']:r['file_offset']+size]
want=bytes(pt[n-size+(o-n)%size] for o in range(size))
assert b==want, 'region differs'"
decoded_equals_log single "$d" "while the guest's TraceEn was set"

# ToPA with the guest's own tables, smaller than the trace (8 KiB).
# Stop mode: efipt.efi's last entry has STOP; once that region is full
# the unit sets Stopped and writes nothing more (SDM 33.2.7.2 "ToPA
# STOP"), OutputOffset left at the size - 1. The regions read back as
# efipt.efi's extractor reads a real CPU's (tests/qemu/guest_output.py)
# are trace.pt, byte for byte, exactly the regions' size; the trace ends
# at the packet that filled the region (the writer hands its bytes to the
# unit at each region's end, not a 64 KiB staging buffer later), so
# the instructions the manifest counts are those a decoder gets, but for
# the few whose packets the cut one held.
guest topastop 'trace --emulated-caps \prof.txt --output topa --mode stop --size 8K --debugcon --shutdown -- \EFI\tools\app.efi' \
	"$PROFILE" -plugin "$LOGGER,out=$TMP/topastop/log.bin,from=traceen"
d=$TMP/topastop
expect "topastop: the guest's STOP entry stopped the output: Stopped, OutputOffset = size - 1" python3 -c "
import json; w=[json.loads(l) for l in open('$d/run/rtit.jsonl')]
assert all(x['result']=='ok' for x in w), w
t=json.load(open('$d/run/manifest.json'))['trace']; g=t['guest']['cpus'][0]
assert g['output']=='topa' and g['stopped'] and not g['error'] and g['gp']==0, g
assert int(g['status'],16)>>5&1 and not int(g['status'],16)>>2&1, g['status']
p=g['position']; r=g['regions'][p['region']]; assert p['offset']==r['size']-1, (p, r)
assert sum(x['size'] for x in g['regions'])==8192==g['bytes']==t['bytes'], g"
python3 tests/qemu/guest_output.py "$d/run" "$d/readback.pt" >"$d/readback.txt" 2>&1
expect "topastop: the regions read back hold trace.pt, all 8192 bytes, unwrapped" sh -c \
	"grep -qx '8192 unwrapped stopped' '$d/readback.txt' && cmp '$d/readback.pt' '$d/run/trace.pt'"
expect_rc "topastop: efipt insn --run decodes without errors" 0 $EFIPT insn --run "$d/run" --no-inst
mv "$TMP/out" "$d/insn.txt"
# where the region's end cuts a packet (here or not, as the packets fall),
# the decoder says so and takes it as the STOP's: the same trace cut
# inside its last long packet, with the manifest saying stopped and not
$EFIPT packets "$d/run/trace.pt" >"$d/packets.txt" 2>&1
python3 -c "
offs=[int(l.split()[0],16) for l in open('$d/packets.txt') if l[:1] in '0123456789abcdef' and len(l.split())>1]
ends=offs[1:]+[8192]
cut=[o for o,e in zip(offs,ends) if e-o >= 2][-1] + 1
open('$d/cut.pt','wb').write(open('$d/run/trace.pt','rb').read()[:cut])"
run_with "$d/run" "$d/stopped" "$d/cut.pt" "g['stopped']=True"
run_with "$d/run" "$d/running" "$d/cut.pt" "g['stopped']=False"
expect_rc "topastop: a trace stopped inside a packet decodes without errors" 0 $EFIPT insn --run "$d/stopped" --no-inst
contains "topastop: ... the cut packet said to be the STOP's" "$TMP/err" \
	"the output stopped where its ToPA STOP region filled (SDM 33.2.7.2)"
expect_rc "topastop: the same cut without STOP is an error" 1 $EFIPT insn --run "$d/running" --no-inst
contains "topastop: ... said as a packet cut off" "$TMP/err" "the trace ends inside a packet at offset"
part_equals_log topastop "$d" prefix "decodes to the first instructions executed"
expect "topastop: the trace stops where the region filled: the manifest's count is what decodes, within one packet's instructions" python3 -c "
import json; t=json.load(open('$d/run/manifest.json'))['trace']
n=sum(1 for l in open('$d/insn.txt') if not l.startswith('['))
assert 0 <= t['insns'] - n <= 200, (t['insns'], n)"

# Wrap mode: the ToPA's last entry is END back to the first table, the
# output goes round (33.2.7.2); the regions read back from the write
# position are the last 8 KiB of trace.pt and decode to the tail of what
# the logger recorded.
guest topawrap 'trace --emulated-caps \prof.txt --output topa --mode wrap --size 8K --debugcon --shutdown -- \EFI\tools\app.efi' \
	"$PROFILE" -plugin "$LOGGER,out=$TMP/topawrap/log.bin,from=traceen"
d=$TMP/topawrap
python3 tests/qemu/guest_output.py "$d/run" "$d/readback.pt" >"$d/readback.txt" 2>&1
expect "topawrap: the output went round the guest's ToPA; read back from the position: trace.pt's last 8 KiB" python3 -c "
import json; t=json.load(open('$d/run/manifest.json'))['trace']; g=t['guest']['cpus'][0]
assert g['output']=='topa' and not g['stopped'] and not g['error'] and g['gp']==0, g
assert sum(x['size'] for x in g['regions'])==8192 and g['bytes'] > 2*8192, g
assert open('$d/readback.txt').read().split()==['8192','wrapped','-'], open('$d/readback.txt').read()
pt=open('$d/run/trace.pt','rb').read(); b=open('$d/readback.pt','rb').read()
assert b==pt[-8192:], 'readback differs from the tail'"
# the read-back tail as a run of its own (a decoder syncs at its first PSB)
run_with "$d/run" "$d/tail" "$d/readback.pt" "t['wrapped']=True"
expect_rc "topawrap: the read-back tail decodes without errors" 0 $EFIPT insn --run "$d/tail" --no-inst
mv "$TMP/out" "$d/insn.txt"
part_equals_log topawrap "$d" suffix "the read-back tail decodes to the last instructions executed"

# Timing and packet settings the guest programs (SDM 33.2.8.2): TSCEn,
# MTCEn with MTCFreq 3, CYCEn, PSBFreq 2 (8 KiB), DisRETC, from efipt.efi's
# own IA32_RTIT_CTL, checked against the profile. The stream carries each:
# TSC, TMA, MTC, CBR, CYC packets; PSB+ no closer than 8 KiB; no RET
# compressed (more TIPs than the same work traced with compression, the
# topa run above); and it decodes to exactly what ran.
guest timing 'trace --emulated-caps \prof.txt --tsc --mtc=3 --cyc --psb=2 --noretcomp --debugcon --shutdown -- \EFI\tools\app.efi' \
	"$PROFILE" -plugin "$LOGGER,out=$TMP/timing/log.bin,from=traceen"
d=$TMP/timing
expect "timing: IA32_RTIT_CTL as programmed: TSCEn, MTCEn, MTCFreq 3, CYCEn, PSBFreq 2, DisRETC; taken" python3 -c "
import json; w=[json.loads(l) for l in open('$d/run/rtit.jsonl')]
assert all(x['result']=='ok' for x in w), w
c=[int(x['value'],16) for x in w if x['msr']=='IA32_RTIT_CTL'][0]
assert c&1 and c&(1<<10) and c&(1<<9) and (c>>14)&15==3 and c&2 and (c>>24)&15==2 and c&(1<<11), hex(c)"
$EFIPT packets "$d/run/trace.pt" >"$d/packets.txt" 2>&1
$EFIPT packets "$TMP/topa/run/trace.pt" >"$TMP/topa/packets.txt" 2>&1
expect "timing: the stream carries TSC, TMA, MTC, CBR, CYC; PSB+ every 8 KiB or more; more TIPs than with RET compression" python3 -c "
rows=[l.split() for l in open('$d/packets.txt') if len(l.split())>1 and l[:1] in '0123456789abcdef']
kinds=[r[1] for r in rows]
assert all(k in kinds for k in ('tsc','tma','mtc','cbr','cyc')), set(kinds)
psb=[int(r[0],16) for r in rows if r[1]=='psb']
assert len(psb) >= 2 and min(b-a for a,b in zip(psb,psb[1:])) >= 8192, psb[:10]
base=[l.split()[1] for l in open('$TMP/topa/packets.txt') if len(l.split())>1]
tips=lambda ks: sum(1 for k in ks if k=='tip')
assert tips(kinds) > tips(base), (tips(kinds), tips(base))"
decoded_equals_log timing "$d" "with the timing and packet settings the guest programmed"

# Deliberately bad programming, as the unit sees it: efipt.efi validated
# its IP filter range against the profile it was given, but the plugin
# emulates Broadwell (CPUID.(14H,0):EBX[2]=0, no ADDRn MSRs): the range
# MSRs and the IA32_RTIT_CTL with ADDR0_CFG would #GP there (SDM 33.2.8.1,
# Table 33-11), so TraceEn is never set and nothing is traced.
BDW=$PWD/tests/data/cpu-profiles/broadwell-u-core-i7-5500u.txt
guest gp 'trace --emulated-caps \prof.txt --filter image=app --debugcon --shutdown -- \EFI\tools\app.efi' "$BDW"
d=$TMP/gp
contains "gp: efipt.efi programmed the filter it was allowed" "$d/debugcon.log" "efipt: filter 0: image app = "
contains "gp: the plugin names the MSR, the value and the rule of the #GP" "$d/qemu.log" \
	"CPU 0: WRMSR IA32_RTIT_ADDR0_A = 0x"
contains "gp: ... and IA32_RTIT_CTL with ADDR0_CFG" "$d/qemu.log" "CPU 0: WRMSR IA32_RTIT_CTL = 0x1"
contains "gp: ... saying the write is not applied" "$d/qemu.log" "would #GP on a CPU with these capabilities"
contains "gp: the run says tracing never started, and why" "$d/qemu.log" \
	"tracing never started: the guest set no IA32_RTIT_CTL.TraceEn with TriggerEn"
expect "gp: rtit.jsonl and the manifest record the #GPs; nothing traced; result failed" python3 -c "
import json; w=[json.loads(l) for l in open('$d/run/rtit.jsonl')]
gp=[x for x in w if x['result']=='#GP']
assert any(x['msr']=='IA32_RTIT_ADDR0_A' for x in gp) and any(x['msr']=='IA32_RTIT_CTL' for x in gp), w
assert all(x.get('why') for x in gp), gp
m=json.load(open('$d/run/manifest.json')); g=m['trace']['guest']['cpus'][0]
assert g['gp']==len(gp) and g['bytes']==0 and not int(g['ctl'],16)&1, g
assert m['status']['result']=='failed' and m['trace']['insns']==0, m['status']"
