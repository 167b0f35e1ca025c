# efipt-qemu.so start=guest across a STOP and a re-enable (docs/qemu.md
# "PT that follows the guest"): tests/qemu/rtit_guest_app.c built with
# -DRTIT_TOGGLE programs one good ToPA, sets TraceEn, works, clears it,
# works untraced, sets TraceEn again without reprogramming anything, works
# and clears it. The unit's output goes on where the first span left it
# (SDM 33.2.7.2: OUTPUT_MASK_PTRS keeps the position across TraceEn), the
# first span opens with PSB+ (PacketByteCnt 0, SDM 33.3.7), each with
# MODE.Exec, TIP.PGE and closes with FUP, TIP.PGD (SDM Table 33-55 cases 2
# and 3), and the whole trace.pt decodes with zero errors to exactly the
# instructions the logger (tests/qemu/insnlog.c from=traceen, which
# watches the WRMSRs itself) recorded while TraceEn was set, both spans,
# none of the untraced work. One boot of OVMF under TCG, about a minute.
. tests/lib.sh
. tests/qemu/lib_qemu.sh
. tests/qemu/lib_guest.sh

need_guest_api "start=guest, TraceEn toggled"
PROFILE=$PWD/tests/data/cpu-profiles/tiger-lake-up3-core-i7-1165g7.txt
A=${EFIPT_BUILD:-build}/tests
[ -f "$A/rtit_toggle.efi" ] || A=build/tests
[ -f "$A/rtit_toggle.efi" ] || { nok "rtit_toggle.efi" "not built (make build/tests/rtit_toggle.efi)"; exit 0; }

d=$TMP/toggle
mkdir -p "$d"
EFIPT_EFI=$A/rtit_toggle.efi sh ovmf/mkesp.sh --image "$d/esp.img" >/dev/null
guest_boot "$d" "$PROFILE" -plugin "$LOGGER,out=$d/log.bin,from=traceen"
rc=$?
# isa-debug-exit with 0: QEMU's status 1
if [ "$rc" -eq 1 ] && [ -f "$d/run/manifest.json" ]; then
	ok "toggle: the app ran to its power-off, the plugin wrote its run"
else
	nok "toggle: the app ran to its power-off" "exit $rc: $(tail -c 400 "$d/qemu.log"); $(tail -c 200 "$d/debugcon.log")"
fi
contains "toggle: the app went through both spans" "$d/debugcon.log" "rtit app: done"
expect "toggle: rtit.jsonl: TraceEn set, cleared, set, cleared; every write taken" python3 -c "
import json; w=[json.loads(l) for l in open('$d/run/rtit.jsonl')]
assert all(x['result']=='ok' for x in w), w
ctl=[int(x['value'],16)&1 for x in w if x['msr']=='IA32_RTIT_CTL']
assert ctl==[1,0,1,0], ctl
assert [x['msr'] for x in w].count('IA32_RTIT_OUTPUT_MASK_PTRS')==1, w"
expect "toggle: one region, both spans in it back to back: the write position is the whole trace" python3 -c "
import json; m=json.load(open('$d/run/manifest.json')); t=m['trace']; g=t['guest']['cpus'][0]
assert g['output']=='topa' and g['gp']==0 and not g['error'] and not g['stopped'], g
r=g['regions']; assert len(r)==1 and r[0]['size']==256*1024, r
n=t['bytes']; assert 500 < n == g['bytes'] == r[0]['written'] < 256*1024, (n, g)
assert g['position']=={'region': 0, 'offset': n} and int(g['output_mask_ptrs'],16)>>32 == n, g
assert not int(g['ctl'],16)&1, g['ctl']
pt=open('$d/run/trace.pt','rb').read(); b=open('$d/run/guest-output.bin','rb').read()
assert len(pt)==n and b[r[0]['file_offset']:r[0]['file_offset']+n]==pt, 'region differs from trace.pt'"
$EFIPT packets "$d/run/trace.pt" >"$d/packets.txt" 2>&1
expect "toggle: two spans in the stream: PSB+ first, each opened by MODE.Exec, TIP.PGE, closed by FUP, TIP.PGD" python3 -c "
k=[l.split()[1] for l in open('$d/packets.txt') if len(l.split())>1 and l[:1] in '0123456789abcdef']
pge=[i for i,x in enumerate(k) if x=='tip.pge']; pgd=[i for i,x in enumerate(k) if x=='tip.pgd']
assert len(pge)==2 and len(pgd)==2, (pge, pgd)
assert pge[0] < pgd[0] < pge[1] < pgd[1] == len(k)-1, (pge, pgd, len(k))
assert k[pgd[0]-1]=='fup' and k[pgd[1]-1]=='fup', k
assert k[0]=='psb' and k[pge[0]-1]=='mode.exec' and k[pge[1]-1]=='mode.exec', k[pgd[0]:pge[1]+1]"
decoded_equals_log toggle "$d" "both spans, nothing of the untraced work"
expect "toggle: the comparison finds a missing instruction" sh -c "! python3 tests/qemu/insnlog_cmp.py \
	'$d/log.bin' '$d/insn.txt' '$d/run/manifest.json' $fc --drop 100"
expect "toggle: the comparison finds the second span missing" python3 -c "
import subprocess
lines=open('$d/insn.txt').read().splitlines(True)
ev=[i for i,l in enumerate(lines) if l.startswith('[')]
open('$d/insn1.txt','w').writelines(lines[:len(lines)//2])
r=subprocess.run(['python3','tests/qemu/insnlog_cmp.py','$d/log.bin','$d/insn1.txt','$d/run/manifest.json','$fc','--whole'])
assert r.returncode != 0"
expect_rc "toggle: efipt decode: zero errors" 0 $EFIPT decode "$d/run"
expect "toggle: efipt decode counts the instructions the manifest does" python3 -c "
import json, re; s=open('$TMP/out').read(); t=json.load(open('$d/run/manifest.json'))['trace']
assert re.search(r'^Errors +0$', s, re.M), s
n=sum(1 for l in open('$d/insn.txt') if not l.startswith('['))
assert n == t['insns'] > 1000, (n, t['insns'])"
