# efipt.efi trace --cpus all under efipt-qemu.so start=guest with -smp 2,
# over an image that, as an OS loader does, calls ExitBootServices and never
# returns (tests/qemu/mp_app.c built with -DMP_APP_EXIT: it runs its
# procedure on the APs through MP services, then ExitBootServices, then
# powers QEMU off). efipt.efi's only way to stop tracing is then its
# ExitBootServices handler (efi/mp_trace.c): it must clear TraceEn on every
# CPU, each CPU on itself through MP services, before the OS would get
# them; the plugin follows each vCPU's WRMSRs and sees every CPU's stream
# end cleanly (no TraceEn left set at the power-off), each decoding with
# zero errors to what the logger recorded for that vCPU while its TraceEn
# was set. One boot of OVMF under TCG.
. tests/lib.sh
. tests/qemu/lib_qemu.sh
. tests/qemu/lib_guest.sh

need_guest_api "guest ExitBootServices"
PROFILE=$PWD/tests/data/cpu-profiles/tiger-lake-up3-core-i7-1165g7.txt
A=${EFIPT_BUILD:-build}/tests
[ -f "$A/mp_exit.efi" ] || A=build/tests
[ -f "$A/mp_exit.efi" ] || { nok "mp_exit.efi" "not built (make build/tests/mp_exit.efi)"; exit 0; }
d=$TMP/ebs
mkdir -p "$d"
cp "$PROFILE" "$d/prof.txt"
sh ovmf/mkesp.sh --image "$d/esp.img" --add "$A/mp_exit.efi:\\EFI\\tools\\app.efi" \
	--add "$d/prof.txt:\\prof.txt" \
	--args 'trace --emulated-caps \prof.txt --cpus all --debugcon -- \EFI\tools\app.efi' >/dev/null
guest_boot "$d" "$PROFILE" -smp 2 -plugin "$LOGGER,out=$d/log.bin,from=traceen,cpus=all"
rc=$?
# isa-debug-exit with 0: QEMU's status 1
if [ "$rc" -eq 1 ] && [ -f "$d/run/manifest.json" ]; then
	ok "ebs: the app ran to ExitBootServices and its power-off, the plugin wrote its run"
else
	nok "ebs: the app ran to its power-off" "exit $rc: $(tail -c 400 "$d/qemu.log"); $(tail -c 300 "$d/debugcon.log")"
fi
contains "ebs: efipt.efi programs both CPUs" "$d/debugcon.log" \
	"efipt: tracing 2 CPUs: 0 (APIC ID 0x0) 1 (APIC ID 0x1)"
contains "ebs: the app ran its procedure on the AP through MP services" "$d/debugcon.log" \
	"mp_app: every AP ran the procedure"
contains "ebs: the app's ExitBootServices succeeded (efipt.efi's handler returned)" "$d/debugcon.log" \
	"mp_app: ExitBootServices succeeded, powering off"
expect "ebs: efipt.efi never got control back: it wrote no result line" sh -c \
	"! grep -q 'returned EFI_\|efipt: exit ' '$d/debugcon.log'"
expect "ebs: no vCPU traced on into the power-off" sh -c "! grep -q 'TraceEn was still set' '$d/qemu.log'"
expect "ebs: each CPU's own WRMSRs: TraceEn set, then cleared on that CPU; all taken" python3 -c "
import json; w=[json.loads(l) for l in open('$d/run/rtit.jsonl')]
assert all(x['result']=='ok' for x in w), [x for x in w if x['result']!='ok']
for c in range(2):
    ctl=[int(x['value'],16) for x in w if x['cpu']==c and x['msr']=='IA32_RTIT_CTL']
    assert len(ctl)==2 and ctl[0]&1 and not ctl[1]&1, (c, ctl)"
expect "ebs: the run has 2 traces, each with bytes, each unit stopped with TraceEn clear" python3 -c "
import json; m=json.load(open('$d/run/manifest.json')); t=m['trace']
assert [e['cpu'] for e in t['traces']]==[0,1], t['traces']
for e, g in zip(t['traces'], t['guest']['cpus']):
    assert e['bytes']==g['bytes'] > 0 and g['gp']==0 and not g['error'], (e, g)
    assert not int(g['ctl'],16)&1, g"
for c in 0 1; do
	cpu_decodes_as_logged ebs "$d" "$c"
done
# each stream ends as a WRMSR that clears TraceEn ends it: FUP, TIP.PGD
for c in 0 1; do
	f=trace.pt
	[ "$c" -eq 0 ] || f=trace.cpu$c.pt
	expect "ebs: CPU $c's stream ends with FUP, TIP.PGD" sh -c \
		"$EFIPT packets '$d/run/$f' | awk 'NF>1{a=b; b=\$2} END{exit !(a==\"fup\" && b==\"tip.pgd\")}'"
done
