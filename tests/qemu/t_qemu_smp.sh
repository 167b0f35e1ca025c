# efipt qemu with -smp 2 (docs/qemu.md "Several CPUs", docs/format.md):
# one trace per vCPU. OVMF wakes the AP in PEI and DXE (MP services: INIT
# and start-up IPIs, real mode at the vector, then 32-bit code); each CPU's
# trace must decode with zero errors to exactly what the logger
# (tests/qemu/insnlog.c cpus=all, same QEMU process) recorded for that vCPU.
. tests/lib.sh
. tests/qemu/lib_qemu.sh

plugin_output "qemu smp"

# 1.1e9 instructions of CPU 0: the Shell is up; the plugin ends QEMU there,
# before the logger sees the next instruction
LIMIT=1100000000
d=$TMP/smp
# (the time-out only ends a hung QEMU: a loaded machine runs this for minutes)
# shellcheck disable=SC2046
expect_rc "smp: efipt qemu traces both vCPUs" 0 nice -n 10 timeout 900 \
	$EFIPT qemu -o "$d/run" --limit $LIMIT -- $(ovmf_args "$d" 2) -icount shift=3,sleep=off \
	-plugin "$LOGGER,out=$d/log.bin,head=0,count=$d/count.txt,cpus=all"
contains "smp: efipt qemu says what CPU 1's trace holds" "$TMP/out" ": CPU 1: "
expect "smp: the manifest lists one trace per CPU (trace.cpus, trace.traces, files)" python3 -c "
import json; m=json.load(open('$d/run/manifest.json')); t=m['trace']
assert t['cpus'] == 2 and [(e['cpu'], e['file']) for e in t['traces']] == [(0, 'trace.pt'), (1, 'trace.cpu1.pt')], t['traces']
files = {f['name']: f for f in m['files']}
for e in t['traces']:
    assert files[e['file']]['status'] == 'written' and files[e['file']]['size'] == e['bytes'], e
# CPU 1 runs thousands of instructions by then (QEMU 10.0: 4716; the exact
# count is checked against the logger below)
assert t['traces'][0]['insns'] == t['insns'] == $LIMIT and t['traces'][1]['insns'] > 1000, t['traces']"
expect_rc "smp: efipt info reads the run" 0 $EFIPT info "$d/run"
contains "smp: info lists CPU 1's trace" "$TMP/out" "CPU 1   trace.cpu1.pt"

# CPU 0: zero errors, the logger's count
expect_rc "smp: CPU 0 decodes without errors" 0 $EFIPT decode --cpu 0 "$d/run"
mv "$TMP/out" "$d/decode0.txt"
expect "smp: CPU 0 decoded = executed count (logger: $(cat "$d/count.txt" 2>/dev/null))" python3 -c "
import re
dec = int(re.search(r'^Instructions +(\d+)', open('$d/decode0.txt').read(), re.M).group(1))
ran = int(open('$d/count.txt').read().split()[3])
assert dec == ran == $LIMIT, (dec, ran)"

# CPU 1: every instruction, as the logger recorded it
expect_rc "smp: CPU 1 decodes without errors" 0 $EFIPT decode --cpu 1 "$d/run"
expect_rc "smp: efipt insn --cpu 1 decodes CPU 1's trace" 0 \
	$EFIPT insn --run "$d/run" --cpu 1 --no-inst
mv "$TMP/out" "$d/insn1.txt"
cpu_equals_log smp "$d" 1
contains "smp: CPU 1 was restarted by start-up IPIs (real mode at the vector)" "$d/insn1.txt" \
	"interrupt, from:"

# a CPU the run does not have
expect_rc "smp: --cpu 2 is refused" 1 $EFIPT decode --cpu 2 "$d/run"
contains "smp: names the CPUs the run has" "$TMP/err" "no trace of CPU 2: the run has 2 (CPUs 0, 1)"
expect_rc "smp: efipt top --cpu 2 is refused too" 2 $EFIPT top --cpu 2 "$d/run"
contains "smp: the analyses name them too" "$TMP/err" "no trace of CPU 2"

# a manifest whose traces entry names another file than the CPU's is refused
cp -r "$d/run" "$d/bad"
python3 -c "
import json; p='$d/bad/manifest.json'; m=json.load(open(p))
m['trace']['traces'][1]['file'] = '../trace.pt'; json.dump(m, open(p, 'w'))"
expect_rc "smp: a traces entry naming another file is refused" 2 $EFIPT insn --run "$d/bad" --cpu 1 --no-inst
contains "smp: says which file CPU 1's trace must be" "$TMP/err" "CPU 1's trace is trace.cpu1.pt, not '../trace.pt'"
expect_rc "smp: --cpu N needs a run directory" 2 $EFIPT insn --pt "$d/run/trace.pt" --raw "$d/run/mem-00000000fffcc000.bin:0xfffcc000" --cpu 1
contains "smp: says so" "$TMP/err" "--cpu 1 picks a trace of a run directory: give --run"
