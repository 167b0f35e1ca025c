# Interrupt vectors in emulated traces (qemu-plugin/idt.h, QEMU 9.2 on:
# plugin API 4): a DXE window of an OVMF boot with the firmware's timer
# interrupts. Every interrupt the trace holds has a record in
# interrupts.jsonl at the decoder's place for it, with a vector; the timer's
# is the one OVMF's LocalApicTimerDxe programs (its source); efipt calls and
# timeline name them, and the names of exceptions and other vectors.
. tests/lib.sh
. tests/qemu/lib_qemu.sh

plugin_output "vectors"
need_api4 vectors "t_qemu_plugin checks the manifest's reason"
# a window of 10M instructions in DXE (dxe_after): the local APIC timer
# ticks in real time, about every 500000 instructions here (2026-11-27)
need_dxe "vectors" "$TMP/probe"
d=$TMP/dxe
# shellcheck disable=SC2046
qemu_run "$d" 300 $(ovmf_args "$d") -plugin "$PLUGIN,dir=$d/run,after=$DXE,limit=10000000,exit=on"
rc=$?
if [ "$rc" -eq 0 ] && [ -f "$d/run/interrupts.jsonl" ]; then
	ok "vectors: QEMU ran the plugin, interrupts.jsonl written"
else
	nok "vectors: QEMU ran the plugin, interrupts.jsonl written" "QEMU exit $rc: $(head -c 400 "$d/qemu.log")"
	exit 0
fi
expect_rc "vectors: efipt insn --run decodes without errors" 0 $EFIPT insn --run "$d/run" --no-inst
mv "$TMP/out" "$d/insn.txt"
# the decoder's interrupts (index of the handler's first instruction, FUP
# IP, TIP IP) are the records', one for one, each with a vector
expect "vectors: a record with a vector at every interrupt the trace holds" python3 -c "
import json, re
got, n = [], 0
for l in open('$d/insn.txt'):
    m = re.match(r'\[interrupt, from: ([0-9a-f]+), to: ([0-9a-f]+)\]', l)
    if m:
        got.append((n, int(m.group(1), 16), int(m.group(2), 16)))
    elif not l.startswith('['):
        n += 1
recs = [json.loads(l) for l in open('$d/run/interrupts.jsonl')]
want = [(r['insn'], int(r['ip'], 16), int(r['handler'], 16)) for r in recs]
assert len(got) >= 4 and got == want, (len(got), len(want), got[:3], want[:3])
assert all(isinstance(r['vector'], int) for r in recs), [r for r in recs if r['vector'] is None][:3]
m = json.load(open('$d/run/manifest.json'))['trace']
assert m['interrupts']['records'] == len(recs) == m['events'] == m['interrupts']['vectors_known'], m"
# what LocalApicTimerDxe programs into the LVT Timer: its source (Debian's
# edk2, as make ovmf-efipt fetches it), the OVMF booted here
src=build/edk2/src/OvmfPkg/LocalApicTimerDxe/LocalApicTimerDxe.h
if [ -f "$src" ]; then
	want=$(sed -n 's/^#define LOCAL_APIC_TIMER_VECTOR *\([0-9]*\).*/\1/p' "$src")
	expect "vectors: the timer's vector is LOCAL_APIC_TIMER_VECTOR ($want), every interrupt the timer's" python3 -c "
import json
recs = [json.loads(l) for l in open('$d/run/interrupts.jsonl')]
m = json.load(open('$d/run/manifest.json'))['trace']['interrupts']
assert m['apic_timer_vector'] == $want and m['timer'] == len(recs), m
assert all(r['vector'] == $want and r['timer'] is True for r in recs), recs[:3]"
else
	ok "vectors: timer vector check SKIP, $src not unpacked (make ovmf-efipt)"
fi
expect_rc "vectors: efipt calls reads them" 0 $EFIPT calls "$d/run" --index
expect "vectors: efipt calls names each interrupt by its vector, at its index" python3 -c "
import json, re
recs = [json.loads(l) for l in open('$d/run/interrupts.jsonl')]
lines = open('$TMP/out').read().splitlines()
named = [int(l.split()[0]) for l in lines if l.endswith('(timer interrupt, vector 0x%02x)' % recs[0]['vector'])]
assert named == [r['insn'] for r in recs], (named[:5], [r['insn'] for r in recs][:5])
assert not any(l.endswith('(interrupt)') for l in lines)"
expect_rc "vectors: efipt timeline reads them" 0 $EFIPT timeline "$d/run" -o "$d/tl.json"
expect "vectors: the timeline's interrupt instants are named by their vector" python3 -c "
import json
recs = [json.loads(l) for l in open('$d/run/interrupts.jsonl')]
ev = json.load(open('$d/tl.json'))['traceEvents']
names = [e['name'] for e in ev if e.get('ph') in ('i', 'I')]
assert names.count('timer interrupt, vector 0x%02x' % recs[0]['vector']) == len(recs), names
assert 'interrupt' not in names, names"
# the names of other vectors: the same trace, its records changed (and
# their size in the manifest, which efipt checks)
cp -r "$d/run" "$d/other"
resize() {
	python3 -c "
import json, os; p = '$d/other/manifest.json'; m = json.load(open(p))
for f in m['files']:
    if f['name'] == 'interrupts.jsonl':
        f['size'] = os.path.getsize('$d/other/interrupts.jsonl')
json.dump(m, open(p, 'w'))"
}
python3 -c "
import json
recs = [json.loads(l) for l in open('$d/run/interrupts.jsonl')]
for i, r in enumerate(recs):
    r.pop('timer', None)
    r['vector'] = [14, 48, None, 15][i % 4]
open('$d/other/interrupts.jsonl', 'w').write(''.join(json.dumps(r) + '\n' for r in recs))"
resize
expect_rc "vectors: efipt calls with exceptions and other vectors" 0 $EFIPT calls "$d/other" --index
expect "vectors: #PF, interrupt vector 0x30, reserved 0x0f by name; unknown ones as interrupts" python3 -c "
lines = open('$TMP/out').read().splitlines()
k = lambda s: sum(1 for l in lines if l.endswith(s))
n = sum(1 for l in open('$d/other/interrupts.jsonl'))
assert k('(#PF page fault, vector 0x0e)') == (n + 3) // 4, k('(#PF page fault, vector 0x0e)')
assert k('(interrupt vector 0x30)') == (n + 2) // 4
assert k('(interrupt)') == (n + 1) // 4
assert k('(reserved exception vector 0x0f)') == n // 4"
# untrusted: a bad record is named with its line, nothing is printed as if fine
sed '3s/"vector": [0-9a-z]*/"vector": 256/' "$d/run/interrupts.jsonl" >"$d/other/interrupts.jsonl"
resize
expect_rc "vectors: efipt calls refuses a vector past 255" 2 $EFIPT calls "$d/other"
contains "vectors: names the file and line" "$TMP/err" "interrupts.jsonl: line 3: not an interrupt record"
printf '{"cpu": 0, "insn": 5, "ip": "0x1", "handler": "0x2", "vector": 32, "timer": 1}\n' \
	>"$d/other/interrupts.jsonl"
resize
expect_rc "vectors: efipt timeline refuses a timer that is not true or false" 2 \
	$EFIPT timeline "$d/other" -o "$d/other.json"
contains "vectors: timeline names the line" "$TMP/err" "interrupts.jsonl: line 1: not an interrupt record"
