# efipt.efi trace --cpus all under efipt-qemu.so start=guest with -smp 4
# (docs/qemu.md "Several CPUs"): efipt.efi programs Intel PT on each AP
# through MP services (StartupThisAP) as on the BSP, each with its own ToPA
# and buffer; the traced image (tests/qemu/mp_app.c) runs a procedure on
# every AP through StartupAllAPs. The plugin follows each vCPU's own
# WRMSRs: each vCPU's stream must start at that vCPU's own TraceEn write,
# decode with zero errors, equal what the logger (tests/qemu/insnlog.c
# cpus=all) recorded for that vCPU while its TraceEn was set, and, on the
# APs, hold mp_app's AP procedure. Needs plugin API 4 (QEMU 9.2 on): under
# an older QEMU, a SKIP (t_qemu_guest.sh checks the refusal there).
. tests/lib.sh
. tests/qemu/lib_qemu.sh

plugin_output "guest smp"
need_api4 "guest smp" start=guest
PROFILE=$PWD/tests/data/cpu-profiles/tiger-lake-up3-core-i7-1165g7.txt
APP=build/tests/mp_app.efi
d=$TMP/smp
profile_esp "$d" 'trace --emulated-caps \prof.txt --cpus all --decode --debugcon --shutdown -- \EFI\tools\app.efi' \
	--add "$APP:\\EFI\\tools\\app.efi"
QEMU_EXTRA="-smp 4 -plugin $LOGGER,out=$d/log.bin,from=traceen,cpus=all" guest_esp \
	"smp: efipt qemu --start guest -smp 4 ran efipt.efi trace --cpus all to power-off" "$d" 900 --esp "$d/esp.img"
contains "smp: efipt.efi programs the four CPUs, each with its APIC ID" "$d/debugcon.log" \
	"efipt: tracing 4 CPUs: 0 (APIC ID 0x0) 1 (APIC ID 0x1) 2 (APIC ID 0x2) 3 (APIC ID 0x3)"
contains "smp: the app ran its procedure on the 3 APs through MP services" "$d/debugcon.log" \
	"efipt: \\EFI\\tools\\app.efi returned EFI_SUCCESS"
contains "smp: the in-place decode reports each CPU" "$d/debugcon.log" "CPU 3 (APIC ID 0x3), "
contains "smp: efipt qemu writes each vCPU's trace" "$d/out" "CPU 3: "
wrmsrs_per_cpu "smp: each vCPU's own WRMSRs: accepted, TraceEn set then cleared, on its own ToPA" "$d" 4
expect "smp: the run lists 4 traces, each with its APIC ID and the plugin's write position" python3 -c "
import json; m=json.load(open('$d/run/manifest.json')); t=m['trace']
assert t['cpus']==4 and [(e['cpu'], e['file']) for e in t['traces']]==[(0,'trace.pt'),(1,'trace.cpu1.pt'),(2,'trace.cpu2.pt'),(3,'trace.cpu3.pt')], t['traces']
files={f['name']: f for f in m['files']}
for e, g in zip(t['traces'], t['guest']['cpus']):
    c=e['cpu']
    assert e['apic_id']=='0x%x' % c and g['cpu']==c, (e, g)
    assert files[e['file']]['size']==e['bytes']==g['bytes'] > 0, (e, g)
    assert g['gp']==0 and not g['error'] and g['position']=={'region': 0, 'offset': e['bytes']}, g
    assert int(g['output_mask_ptrs'],16)>>32==e['bytes'], g"
# Each stream starts right after that vCPU's own TraceEn WRMSR: at the next
# instruction it ran, the one after the WRMSR, or an event's handler where
# an interrupt came first (seen once in CI's runs). The logger says which:
# on an AP its record has the WRMSR just before the trace's first
# instruction; on the BSP its record begins at the TraceEn write it saw.
expect "smp: each vCPU's stream starts right after its own TraceEn write (the logger's record)" python3 -c "
import json, struct; m=json.load(open('$d/run/manifest.json')); t=m['trace']
w=[json.loads(l) for l in open('$d/run/rtit.jsonl')]
def logged(c, i):
    f=open('$d/log.bin' + ('.cpu%d' % c if c else ''), 'rb'); f.seek(8 * i); raw=f.read(8)
    return struct.unpack('<Q', raw)[0] if len(raw) == 8 else None
for e in t['traces']:
    c=e['cpu']
    on=[x for x in w if x['cpu']==c and x['msr']=='IA32_RTIT_CTL' and int(x['value'],16)&1][0]
    fi=int(e['first_ip'],16)
    if c:
        assert logged(c, e['first_call'] - 1)==int(on['ip'],16) and logged(c, e['first_call'])==fi, (e, on)
    else:
        assert logged(0, 0)==fi, (e, on)"
fc=$(python3 -c "import json; print(json.load(open('$d/run/manifest.json'))['trace']['first_call'])")
proc=$(nm build/tests/mp_app.so | sed -n 's/^0*\([0-9a-f]*\) T mp_app_ap_procedure$/\1/p')
base=$(python3 -c "import json; print([i['base'] for i in json.load(open('$d/run/images.json'))['images'] if i['name']=='app'][0])")
procip=$(python3 -c "print('%016x' % ($base + 0x$proc))")
for c in 0 1 2 3; do
	expect_rc "smp: CPU $c decodes with zero errors" 0 $EFIPT insn --run "$d/run" --cpu "$c" --no-inst
	mv "$TMP/out" "$d/insn$c.txt"
	if [ "$c" -eq 0 ]; then
		set -- "$d/log.bin" "$d/insn0.txt" "$d/run/manifest.json" "$fc" --whole
	else
		set -- "$d/log.bin.cpu$c" "$d/insn$c.txt" "$d/run/manifest.json" 0 --cpu "$c"
	fi
	if python3 tests/qemu/insnlog_cmp.py "$@" >"$d/cmp$c.txt" 2>&1; then
		ok "smp: CPU $c decoded = executed while its TraceEn was set ($(cat "$d/cmp$c.txt"))"
	else
		nok "smp: CPU $c decoded = executed" "$(head -c 400 "$d/cmp$c.txt")"
	fi
	n=$(grep -c "^$procip\$" "$d/insn$c.txt")
	if [ "$c" -eq 0 ]; then
		[ "$n" -eq 0 ] && ok "smp: the BSP's trace does not run the AP procedure" ||
			nok "smp: the BSP's trace does not run the AP procedure" "$n times"
	else
		[ "$n" -eq 1 ] && ok "smp: CPU $c's trace holds the AP procedure (0x$procip) once" ||
			nok "smp: CPU $c's trace holds the AP procedure" "$n times at 0x$procip"
	fi
done
# the comparison finds one instruction changed in an AP's trace
sed '100s/.*/0000000000000000/' "$d/insn2.txt" >"$d/insn2.drop"
expect "smp: the comparison finds an instruction of CPU 2's that differs" sh -c "! python3 \
	tests/qemu/insnlog_cmp.py '$d/log.bin.cpu2' '$d/insn2.drop' '$d/run/manifest.json' 0 --cpu 2"

# --cpus LIST: CPUs 0 and 2 programmed, 1 and 3 left alone (the app still
# runs its procedure on all three APs)
d=$TMP/list
profile_esp "$d" 'trace --emulated-caps \prof.txt --cpus 0,2 --debugcon --shutdown -- \EFI\tools\app.efi' \
	--add "$APP:\\EFI\\tools\\app.efi"
QEMU_EXTRA="-smp 4" guest_esp "list: trace --cpus 0,2 ran to power-off" "$d" 900 --esp "$d/esp.img"
contains "list: efipt.efi programs CPUs 0 and 2 alone" "$d/debugcon.log" \
	"efipt: tracing 2 CPUs: 0 (APIC ID 0x0) 2 (APIC ID 0x2)"
expect "list: only CPUs 0 and 2 wrote the RTIT MSRs; the run names their APIC IDs" python3 -c "
import json; w=[json.loads(l) for l in open('$d/run/rtit.jsonl')]
assert sorted(set(x['cpu'] for x in w))==[0, 2], sorted(set(x['cpu'] for x in w))
t=json.load(open('$d/run/manifest.json'))['trace']
assert [(e['cpu'], e['apic_id']) for e in t['traces'] if 'apic_id' in e]==[(0, '0x0'), (2, '0x2')], t['traces']"
expect_rc "list: CPU 2 decodes with zero errors" 0 $EFIPT decode --cpu 2 "$d/run"
