# The flight recorder through resets under QEMU+OVMF (no Intel PT: the
# SYNTHETIC source, labelled so everywhere). One QEMU, three boots, one
# efipt.efi command line: trace --recorder arms a recorder over
# tests/qemu/rectool.c, which ends boot 1 with ExitBootServices and
# ResetSystem(EfiResetWarm), hangs in boot 2 (interrupts off) until QMP
# system_reset, and returns in boot 3; boots 2 and 3 recover the last
# trace before they arm again, and each recovered run directory must hold
# exactly the synthetic truth. The trace went round its ring: under TCG the
# output MSRs read 0, so its end comes from the newest PSB+ by TSC (the MSR
# case: tests/unit/test_recorder.c, over the PT model). Port 0CF9H, the
# explicit recover and bad input: t_recorder_recover.sh.
. tests/lib.sh
. tests/qemu/lib_qemu.sh
. tests/qemu/lib_recorder.sh

RING=16384
INSNS=500000
d=$TMP/seq
mkdir -p "$d"
sh ovmf/mkesp.sh --image "$d/esp.img" --add "$TOOL:rectool.efi" --args \
	"trace --recorder --source synthetic --size 16K --insns $INSNS --no-snapshot --debugcon --shutdown -- \\rectool.efi reset-seq ebs hang" \
	>/dev/null
QEMU_EXTRA="-qmp unix:$d/qmp.sock,server=on,wait=off" QEMU_REBOOT=1 BOOT_TIMEOUT=240 \
	boot_esp seq >"$d/boot.txt" &
bootpid=$!
n=0
while [ $n -lt 400 ] && ! grep -q "rectool: hanging" "$d/debugcon.log" 2>/dev/null; do
	sleep 0.5
	n=$((n + 1))
done
sleep 1
if qmp_reset "$d/qmp.sock" >"$d/qmp.txt" 2>&1; then
	ok "boot 2 hangs: QMP system_reset of the hung guest"
else
	nok "boot 2 hangs: QMP system_reset of the hung guest" "$(cat "$d/qmp.txt")"
fi
wait $bootpid
cat "$d/boot.txt"
L=$d/debugcon.log
contains "boot 1: ExitBootServices, then a warm reset" "$L" \
	"rectool: ExitBootServices, then ResetSystem(EfiResetWarm)"
contains "the SYNTHETIC stream went round the ring" "$L" "-byte ring 3 times"
expect "boots 2 and 3 find the last recorder and recover it before arming again" python3 -c "
t = open('$L').read()
assert t.count('efipt: a flight recorder trace from an earlier boot is in memory') == 2
assert t.count('was never recovered: recovering it first') == 2
assert t.count('recorder armed: generation') == 3 and 'generation 3,' in t
assert 'rectool: sequence done, returning' in t"
POS=$(sed -n 's/.*write position \(0x[0-9a-f]*\)$/\1/p' "$L" | head -n 1)
set -- $(recovered_dirs seq)
if [ $# -ne 2 ]; then
	nok "two recovered run directories" "$# of them in $(rundirs seq | tr '\n' ' ')"
	exit 0
fi
R1=$1 R2=$2
for b in 1 2; do
	eval R=\$R$b
	expect_rc "boot $b's trace: efipt info accepts the recovered run" 0 $EFIPT info "$R"
	expect "boot $b's trace: manifest: from boot $b in boot $((b + 1)), end psb_tsc, SYNTHETIC" \
		python3 -c "
import json; m = json.load(open('$R/manifest.json')); r = m['recovered']
assert r['from_boot'] == $b and r['this_boot'] == $b + 1 and not r['same_boot'], r
assert r['end'] == 'psb_tsc' and r['generation'] == $b, r
assert m['trace']['source'] == 'synthetic' and m['trace']['recovered'] and m['trace']['wrapped']
assert m['status']['result'] == 'ok' and 'SYNTHETIC' in m['status']['message']"
	check_truth "$R" "boot $b's trace"
done
expect "boot 1's trace: ExitBootServices came, code was taken there" python3 -c "
import json; r = json.load(open('$R1/manifest.json'))['recovered']
assert r['exit_boot_services'] and r['code_snapshots_at_exit'] > 0, r
m = json.load(open('$R1/memmap.json'))['regions']
assert any(x['taken'] == 'exit_boot_services' for x in m)"
expect "boot 2's trace: no ExitBootServices, no code taken for it" python3 -c "
import json; r = json.load(open('$R2/manifest.json'))['recovered']
assert not r['exit_boot_services'] and r['code_snapshots_at_exit'] == 0, r"
