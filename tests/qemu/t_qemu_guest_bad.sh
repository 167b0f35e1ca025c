# efipt-qemu.so start=guest against a guest that programs Intel PT itself,
# badly (tests/qemu/rtit_guest_app.c, booted as BOOTX64.EFI, Tiger Lake's
# capabilities): each bad write is reported as the #GP or operational
# error the SDM names, with the MSR, the value and the rule, and the run
# goes on; absurd ToPA chains cost no more than the entries the output
# reaches; a guest that never enables, or powers off with TraceEn set,
# gets a clear message and (for the second) a trace that ends cleanly.
# Three boots of OVMF under TCG, about a minute each.
. tests/lib.sh
. tests/qemu/lib_qemu.sh

plugin_output "start=guest, bad guests"
PROFILE=$PWD/tests/data/cpu-profiles/tiger-lake-up3-core-i7-1165g7.txt
api=$(qemu-system-x86_64 --version | sed -n 's/^QEMU emulator version \([0-9]*\)\.\([0-9]*\).*/\1 \2/p')
set -- $api
if [ "${1:-0}" -lt 9 ] || { [ "$1" -eq 9 ] && [ "${2:-0}" -lt 2 ]; }; then
	ok "start=guest, bad guests: SKIP, QEMU $1.$2 has no plugin API 4 (t_qemu_guest checks the refusal)"
	exit 0
fi
# the apps: where this build put them (make SANITIZE=1: build/san), else build/
A=${EFIPT_BUILD:-build}/tests
[ -f "$A/rtit_bad.efi" ] || A=build/tests
for a in bad noen nodis; do
	[ -f "$A/rtit_$a.efi" ] || { nok "rtit_$a.efi" "not built (make $A/rtit_$a.efi)"; exit 0; }
done

# app NAME [QEMU...]: boot rtit_NAME.efi as BOOTX64.EFI under
# start=guest; $TMP/NAME/{run,qemu.log,debugcon.log}
app() {
	n=$1
	shift
	d=$TMP/$n
	mkdir -p "$d"
	EFIPT_EFI=$A/rtit_$n.efi sh ovmf/mkesp.sh --image "$d/esp.img" >/dev/null
	guest_boot "$d" "$PROFILE" "$@"
	rc=$?
	# isa-debug-exit with 0: QEMU's status 1
	if [ "$rc" -eq 1 ] && [ -f "$d/run/manifest.json" ]; then
		ok "$n: the app ran to its power-off, the plugin wrote its run"
	else
		nok "$n: the app ran to its power-off" "exit $rc: $(tail -c 400 "$d/qemu.log"); $(tail -c 200 "$d/debugcon.log")"
	fi
}

app bad
d=$TMP/bad
contains "bad: the app went through every step" "$d/debugcon.log" "rtit app: done"
contains "base: an unaligned OUTPUT_BASE is the #GP of 33.2.8.7, with MSR and value" "$d/qemu.log" \
	"WRMSR IA32_RTIT_OUTPUT_BASE = 0x"
expect "base: ... bits 6:0 named, the write not applied" python3 -c "
import re; s=open('$d/qemu.log').read()
m=re.search(r'CPU 0: WRMSR IA32_RTIT_OUTPUT_BASE = (0x[0-9a-f]+) at 0x[0-9a-f]+ would #GP on a CPU with these capabilities: .*reserved bits \(6:0, or at or above MAXPHYADDR 40; SDM 33.2.8.7\) \(the write is not applied\)', s)
assert m and int(m.group(1),16) & 0x7f == 0x40, s[:2000]"
contains "range: IA32_RTIT_ADDR2_A on a CPU with 2 ranges is a #GP (MSR not enumerated)" "$d/qemu.log" \
	"WRMSR IA32_RTIT_ADDR2_A = 0x1000 at 0x"
contains "range: ... the rule: CPUID.(EAX=14H,ECX=1):EAX[2:0]" "$d/qemu.log" \
	"address range not enumerated: CPUID.(EAX=14H,ECX=1):EAX[2:0]"
contains "range: TraceEn with ADDR2_CFG=1 is a #GP naming the ranges the CPU has" "$d/qemu.log" \
	"ADDR2_CFG=1 but this CPU has 2 address ranges (CPUID.(EAX=14H,ECX=1):EAX[2:0]; SDM 33.2.8.2)"
contains "noend: a ToPA without END runs into memory that is no entry: ToPA error 1, STATUS.Error" "$d/qemu.log" \
	"= 0xffffffffffffffff: reserved bits set (ToPA error 1; bits at or above MAXPHYADDR included, error 2c) (SDM 33.2.7.2) (IA32_RTIT_STATUS.Error set)"
contains "loop: END to a table whose entry 0 is END is ToPA error 4b" "$d/qemu.log" \
	"END in entry 0 of a table (ToPA error 4b)"
expect "bad: rtit.jsonl: the #GPs (base, ADDR2_A, CTL) with their rules, every TraceEn after them taken" python3 -c "
import json; w=[json.loads(l) for l in open('$d/run/rtit.jsonl')]
gp=[(x['msr'], x['why']) for x in w if x['result']=='#GP']
assert [m for m,_ in gp]==['IA32_RTIT_OUTPUT_BASE','IA32_RTIT_ADDR2_A','IA32_RTIT_CTL'], gp
on=[x for x in w if x['msr']=='IA32_RTIT_CTL' and int(x['value'],16)&1 and x['result']!='#GP']
assert len(on)==3 and all(x['result']=='ok' for x in on), on"
expect "many: a 1000000-entry table: only the entries the output reached were read, each a region of the file" python3 -c "
import json, os; m=json.load(open('$d/run/manifest.json')); g=m['trace']['guest']['cpus'][0]
regs=g['regions']; many=[r for r in regs if r['entry'] >= 0 and r['table'] not in (regs[0]['table'],)]
assert 8 <= len(many) <= 64, [ (r['table'], r['entry']) for r in regs]
assert [r['entry'] for r in many]==list(range(len(many))), many
assert all(r['base']==regs[0]['base'] and r['size']==4096 for r in many), many
assert all(r['written']==4096 for r in many[:-1]) and many[-1]['written'] > 0, many
assert g['topa_entries'] < 100 and 'regions_not_recorded' not in g, g
assert os.path.getsize('$d/run/guest-output.bin')==sum(r['size'] for r in regs)"

app noen
d=$TMP/noen
contains "noen: the app programmed PT" "$d/debugcon.log" "rtit app: programmed, never enabled"
contains "noen: the run says tracing never started, with the WRMSRs it saw" "$d/qemu.log" \
	"tracing never started: the guest set no IA32_RTIT_CTL.TraceEn with TriggerEn in"
expect "noen: three WRMSRs taken, no #GP, no trace, result failed" python3 -c "
import json; w=[json.loads(l) for l in open('$d/run/rtit.jsonl')]
assert [x['result'] for x in w]==['ok']*3, w
m=json.load(open('$d/run/manifest.json'))
assert m['status']['result']=='failed' and m['trace']['insns']==0, m['status']
assert '(3 WRMSRs to the PT MSRs, 0 of them #GP)' in m['status']['message'], m['status']"

app nodis -plugin "$LOGGER,out=$TMP/nodis/log.bin,from=traceen"
d=$TMP/nodis
contains "nodis: the plugin says TraceEn was still set at the exit" "$d/qemu.log" \
	"CPU 0: IA32_RTIT_CTL.TraceEn was still set when QEMU exited: the trace ends after the last instruction that ran"
expect "nodis: the trace's last packets are FUP, TIP.PGD: it ends cleanly" sh -c \
	"$EFIPT packets '$d/run/trace.pt' | awk 'NF>1{a=b; b=\$2} END{exit !(a==\"fup\" && b==\"tip.pgd\")}'"
# decoded = what the logger recorded from TraceEn on (prefix: one run here
# logged one instruction more than the trace holds, not yet explained)
expect_rc "nodis: efipt insn --run decodes without errors" 0 $EFIPT insn --run "$d/run" --no-inst
mv "$TMP/out" "$d/insn.txt"
part_equals_log nodis "$d" prefix "decoded = the logged instructions from TraceEn on, to the power-off"
