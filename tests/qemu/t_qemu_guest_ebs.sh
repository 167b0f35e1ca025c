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

plugin_output "guest ExitBootServices"
api=$(qemu-system-x86_64 --version | sed -n 's/^QEMU emulator version \([0-9]*\)\.\([0-9]*\).*/\1 \2/p')
set -- $api
if [ "${1:-0}" -lt 9 ] || { [ "$1" -eq 9 ] && [ "${2:-0}" -lt 2 ]; }; then
	ok "guest ExitBootServices: SKIP, QEMU $1.$2 has no plugin API 4 (start=guest)"
	exit 0
fi
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
fc=$(python3 -c "import json; print(json.load(open('$d/run/manifest.json'))['trace']['first_call'])")
for c in 0 1; do
	expect_rc "ebs: CPU $c decodes with zero errors" 0 $EFIPT insn --run "$d/run" --cpu "$c" --no-inst
	mv "$TMP/out" "$d/insn$c.txt"
	if [ "$c" -eq 0 ]; then
		set -- "$d/log.bin" "$d/insn0.txt" "$d/run/manifest.json" "$fc" --whole
	else
		set -- "$d/log.bin.cpu$c" "$d/insn$c.txt" "$d/run/manifest.json" 0 --cpu "$c"
	fi
	if python3 tests/qemu/insnlog_cmp.py "$@" >"$d/cmp$c.txt" 2>&1; then
		ok "ebs: CPU $c decoded = executed while its TraceEn was set ($(cat "$d/cmp$c.txt"))"
	else
		nok "ebs: CPU $c decoded = executed" "$(head -c 400 "$d/cmp$c.txt")"
	fi
done
# the BSP's trace runs into ExitBootServices: its last instructions are
# the firmware's, not the app's power-off (after the handler's WRMSR)
expect "ebs: the BSP's trace ends before the app's power-off" python3 -c "
import json
app=[i for i in json.load(open('$d/run/images.json'))['images'] if i['name']=='app']
ins=[int(l,16) for l in open('$d/insn0.txt') if not l.startswith('[')]
assert ins, 'empty'
if app:
    b=int(app[0]['base'],16) if isinstance(app[0]['base'],str) else app[0]['base']
    assert not (b <= ins[-1] < b + app[0]['size']), hex(ins[-1])"
