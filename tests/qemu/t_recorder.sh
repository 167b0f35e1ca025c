# The flight recorder under QEMU+OVMF (no Intel PT: the SYNTHETIC source,
# labelled so everywhere): efipt.efi trace --recorder arms a recorder over
# tests/qemu/rectool.c, which resets the machine (ResetSystem(EfiResetWarm),
# port 0CF9H, ExitBootServices then a warm reset) or hangs until QMP
# system_reset; the next boot's efipt.efi recovers the trace before it arms
# again, and the recovered run directory must hold exactly the synthetic
# truth (efipt synth over the recovered snapshot of the traced image, laid
# into the ring as a CPU in wrap mode would). Under TCG the output MSRs read
# 0, so the end of a wrapped trace comes from the newest PSB+ by TSC (the
# MSR case is tests/unit/test_recorder.c, over the PT model).
. tests/lib.sh
. tests/qemu/lib_qemu.sh

TOOL=${EFIPT_BUILD:-build}/tests/rectool.efi
[ -f "$TOOL" ] || TOOL=build/tests/rectool.efi
if [ ! -f "$TOOL" ]; then
	nok "recorder: rectool.efi" "$TOOL is not built (make $TOOL)"
	exit 0
fi
RING=16384

# arm NAME HOW INSNS: an ESP whose efipt.args arms a recorder over rectool
arm_esp() {
	mkdir -p "$TMP/$1"
	sh ovmf/mkesp.sh --image "$TMP/$1/esp.img" --add "$TOOL:rectool.efi" --args \
		"trace --recorder --source synthetic --size 16K --insns $3 --no-snapshot --debugcon --shutdown -- \\rectool.efi reset-once $2" \
		>/dev/null
}

# the recovered run directory of NAME (its manifest's command is recover)
recovered_dir() {
	for d in $(rundirs "$1"); do
		grep -q '"command": "recover"' "$d/manifest.json" 2>/dev/null && echo "$d"
	done | head -n 1
}

# check NAME INSNS END: the recovered run against the synthetic truth
# (lib.sh's helpers set name and want: other names here)
check() {
	cn=$1 insns=$2 cend=$3
	L=$TMP/$cn/debugcon.log
	contains "$cn: the next boot finds the recorder" "$L" \
		"efipt: a flight recorder trace from an earlier boot is in memory"
	contains "$cn: it is recovered before a new one is armed" "$L" \
		"efipt: the last recorder's trace is in memory and was never recovered: recovering it first"
	R=$(recovered_dir "$cn")
	if [ -z "$R" ]; then
		nok "$cn: a recovered run directory" "none in $(rundirs "$cn" | tr '\n' ' ')"
		return
	fi
	expect_rc "$cn: efipt info accepts the recovered run" 0 $EFIPT info "$R"
	expect "$cn: manifest: recovered from boot 1 in boot 2, end $cend, SYNTHETIC" python3 -c "
import json; m = json.load(open('$R/manifest.json')); r = m['recovered']
assert r['from_boot'] == 1 and r['this_boot'] == 2 and not r['same_boot'], r
assert r['end'] == '$cend' and m['trace']['source'] == 'synthetic' and m['trace']['recovered']
assert m['status']['result'] == 'ok' and 'SYNTHETIC' in m['status']['message']"
	# the truth: what boot 1 synthesized (its first lines), again on the host
	entry=$(sed -n 's/.*instructions of .rectool.efi walked from its entry \(0x[0-9a-f]*\),.*/\1/p' "$L" | head -n 1)
	walked=$(sed -n 's/.*SYNTHETIC trace (no Intel PT): \([0-9]*\) instructions.*/\1/p' "$L" | head -n 1)
	pos=$(sed -n 's/.*write position \(0x[0-9a-f]*\)$/\1/p' "$L" | head -n 1)
	base=$(python3 -c "import json; print(json.load(open('$R/manifest.json'))['traced_image']['base'])")
	size=$(python3 -c "import json; print(json.load(open('$R/manifest.json'))['traced_image']['size'])")
	snap=$(printf '%s/mem-%016x.bin' "$R" "$base")
	if ! $EFIPT synth --out "$TMP/$cn/stream.pt" --raw "$snap:0-$size:$base" --start "$entry" \
		--seed 1 --insns "$insns" --size $((4 * RING)) --interrupts 2 --tsc --psb-period 4096 \
		2>"$TMP/$cn/synth.err"; then
		nok "$cn: the synthetic truth on the host" "$(cat "$TMP/$cn/synth.err")"
		return
	fi
	if python3 tests/qemu/recorder_check.py "$TMP/$cn/stream.pt" "$R" $RING "$pos" \
		>"$TMP/$cn/cmp.txt" 2>&1; then
		ok "$cn: trace.pt is the synthetic truth ($(cat "$TMP/$cn/cmp.txt"))"
	else
		nok "$cn: trace.pt is the synthetic truth" "$(cat "$TMP/$cn/cmp.txt")"
	fi
	expect_rc "$cn: efipt decode reads the recovered run" 0 $EFIPT decode "$R"
	contains "$cn: no decode errors" "$TMP/out" "Errors        0"
	if [ "$cend" = unwrapped ]; then
		contains "$cn: every walked instruction decoded ($walked)" "$TMP/out" \
			"Instructions  $walked"
	fi
}

# 1. ExitBootServices (what an OS loader does last), then
#    ResetSystem(EfiResetWarm); the trace went round the ring: its end from
#    the newest PSB+ by TSC; the code taken again at ExitBootServices
arm_esp ebs ebs 500000
QEMU_REBOOT=1 boot_esp ebs
contains "ebs: the ring went round" "$TMP/ebs/debugcon.log" "-byte ring 3 times"
check ebs 500000 psb_tsc
R=$(recovered_dir ebs)
expect "ebs: the manifest says ExitBootServices came, code taken there" python3 -c "
import json; r = json.load(open('$R/manifest.json'))['recovered']
assert r['exit_boot_services'] and r['code_snapshots_at_exit'] > 0, r
m = json.load(open('$R/memmap.json'))['regions']
assert any(x['taken'] == 'exit_boot_services' for x in m)"

# 2. port 0CF9H, a trace that never wrapped: exact end from the zero fill
arm_esp cf9 cf9 50000
QEMU_REBOOT=1 boot_esp cf9
contains "cf9: the reset through port 0xcf9" "$TMP/cf9/debugcon.log" "rectool: out 0xcf9, 0x06"
check cf9 50000 unwrapped

# 3. a guest that hangs (interrupts off), reset from outside by QMP
arm_esp hang hang 500000
sock=$TMP/hang/qmp.sock
QEMU_EXTRA="-qmp unix:$sock,server=on,wait=off" QEMU_REBOOT=1 boot_esp hang >"$TMP/hang/boot.txt" &
bootpid=$!
n=0
while [ $n -lt 180 ] && ! grep -q "rectool: hanging" "$TMP/hang/debugcon.log" 2>/dev/null; do
	sleep 0.5
	n=$((n + 1))
done
sleep 1
if python3 - "$sock" <<'EOF' >"$TMP/hang/qmp.txt" 2>&1
import json, socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
f = s.makefile("rw")
f.readline()  # greeting
for cmd in ("qmp_capabilities", "system_reset"):
    f.write(json.dumps({"execute": cmd}) + "\n")
    f.flush()
    while True:
        r = json.loads(f.readline())
        if "return" in r or "error" in r:
            break
    assert "return" in r, r
print("system_reset sent")
EOF
then
	ok "hang: QMP system_reset of the hung guest"
else
	nok "hang: QMP system_reset of the hung guest" "$(cat "$TMP/hang/qmp.txt")"
fi
wait $bootpid
cat "$TMP/hang/boot.txt"
check hang 500000 psb_tsc
